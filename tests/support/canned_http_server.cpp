#include "tests/support/canned_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace inferscope::test {
namespace {

int listen_socket(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("canned server: socket() failed");
  const int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the system picks a free port
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("canned server: cannot listen on 127.0.0.1");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away
    sent += static_cast<size_t>(n);
  }
}

// Reads one request: header lines up to the blank line, then Content-Length bytes of body.
CannedRequest read_request(int fd) {
  std::string data;
  char buf[4096];
  size_t header_end = std::string::npos;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return {};
    data.append(buf, static_cast<size_t>(n));
  }
  CannedRequest r;
  const std::string head = data.substr(0, header_end);
  const size_t first_space = head.find(' ');
  r.method = head.substr(0, first_space);
  r.path = head.substr(first_space + 1, head.find(' ', first_space + 1) - first_space - 1);
  r.headers = head.substr(head.find("\r\n") + 2);
  size_t length = 0;
  for (const char* key : {"Content-Length: ", "content-length: "}) {
    if (const size_t at = head.find(key); at != std::string::npos) length = std::stoul(head.substr(at + std::strlen(key)));
  }
  r.body = data.substr(header_end + 4);
  while (r.body.size() < length) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    r.body.append(buf, static_cast<size_t>(n));
  }
  return r;
}

}  // namespace

CannedHttpServer::CannedHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = listen_socket(port_);
  thread_ = std::thread([this] { serve(); });
}

CannedHttpServer::~CannedHttpServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  ::close(listen_fd_);
}

std::vector<CannedRequest> CannedHttpServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

bool CannedHttpServer::wait_for_hang_up(int timeout_ms) {
  std::unique_lock lock(mu_);
  return hung_up_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return hung_up_; });
}

void CannedHttpServer::serve() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    answer(fd);
    ::close(fd);
  }
}

void CannedHttpServer::answer(int fd) {
  const CannedRequest request = read_request(fd);
  if (request.method.empty()) return;
  {
    std::lock_guard lock(mu_);
    requests_.push_back(request);
  }
  const CannedResponse response = handler_(request);
  std::this_thread::sleep_for(std::chrono::milliseconds(response.silence_before_ms));
  std::string head = "HTTP/1.1 " + std::to_string(response.status) + " Canned\r\nContent-Type: " + response.content_type +
                     "\r\nConnection: close\r\n";
  if (response.content_length) head += "Content-Length: " + std::to_string(*response.content_length) + "\r\n";
  send_all(fd, head + "\r\n");
  for (size_t i = 0; i < response.chunks.size(); ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(response.chunk_delay_ms));
    send_all(fd, response.chunks[i]);
  }
  if (!response.hold_until_client_closes) return;
  // A held stream: wait until the client closes its end (recv returns 0 or fails) or the test ends.
  char byte;
  while (!stopping_) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0 && ::recv(fd, &byte, 1, 0) <= 0) {
      std::lock_guard lock(mu_);
      hung_up_ = true;
      hung_up_cv_.notify_all();
      return;
    }
  }
}

int unused_port() {
  int port = 0;
  ::close(listen_socket(port));
  return port;
}

}  // namespace inferscope::test
