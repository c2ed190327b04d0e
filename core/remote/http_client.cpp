#include "core/remote/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/remote/chat_stream.h"
#include "core/remote/text_excerpt.h"
#include "core/version/version.h"

namespace inferscope {
namespace {

constexpr int kPollMs = 100;  // the longest a cancel waits while the server sends nothing

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw HttpError(HttpFailure::Transfer, "libcurl: global init failed");
  });
}

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct MultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// What the write callback sees: where the body goes and whether to stop.
struct Transfer {
  CURL* easy = nullptr;
  const HttpBodySink* sink = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  std::string body;          // the whole body, or the error answer of a non-2xx status
  bool stopped_by_sink = false;
};

bool success_status(long status) { return status >= 200 && status < 300; }

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->cancel != nullptr && t->cancel->load()) return 0;  // curl ends the transfer: CURLE_WRITE_ERROR
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  // A non-2xx answer is kept for the error message, never fed to the sink.
  if (t->sink == nullptr || !*t->sink || !success_status(status)) {
    t->body.append(data, n);
    return n;
  }
  if (!(*t->sink)(std::string_view(data, n))) {
    t->stopped_by_sink = true;
    return 0;
  }
  return n;
}

HttpFailure failure_of(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return HttpFailure::Connect;
    case CURLE_OPERATION_TIMEDOUT:
      return HttpFailure::Timeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
      return HttpFailure::Tls;
    default:
      return HttpFailure::Transfer;
  }
}

const char* failure_words(HttpFailure failure) {
  switch (failure) {
    case HttpFailure::Connect: return "could not connect";
    case HttpFailure::Timeout: return "timed out";
    case HttpFailure::Tls: return "TLS failure";
    case HttpFailure::Cancelled: return "cancelled";
    default: return "transfer failed";
  }
}

// The message of an error answer: the server's error object when the body is an OpenAI-style error
// (the parser of streamed payloads reads both shapes), else the body itself; quoted short either way.
std::string answer_excerpt(const std::string& body) {
  if (body.empty()) return "(empty body)";
  const std::vector<ChatEvent> events = decode_completion_payload(body);
  if (!events.empty()) {
    if (const auto* error = std::get_if<ServerError>(&events.front())) return text_excerpt(error->message, 300);
  }
  return text_excerpt(body, 300);
}

void set_options(CURL* easy, const HttpRequest& request, curl_slist* headers, Transfer& transfer, char* error_buffer) {
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for timeouts: safe in threads
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, user_agent().c_str());  // libcurl keeps its own copy
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout_s * 1000));
  if (request.total_timeout_s > 0) curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout_s * 1000));
  if (request.idle_timeout_s > 0) {
    // Below 1 byte/s for idle_timeout_s seconds: the server has gone quiet.
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(request.idle_timeout_s)));
  }
  if (request.post) {
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
}

}  // namespace

HttpResponse http_perform(const HttpRequest& request, const HttpBodySink& sink, const std::atomic<bool>* cancel) {
  init_curl_once();
  const std::string what = std::string(request.post ? "POST " : "GET ") + request.url;
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
  if (!easy || !multi) throw HttpError(HttpFailure::Transfer, what + ": libcurl could not start a transfer");
  curl_slist* list = nullptr;
  for (const std::string& h : request.headers) list = curl_slist_append(list, h.c_str());
  if (request.post) list = curl_slist_append(list, "Content-Type: application/json");
  std::unique_ptr<curl_slist, SlistDeleter> headers(list);

  Transfer transfer;
  transfer.easy = easy.get();
  transfer.sink = &sink;
  transfer.cancel = cancel;
  char error_buffer[CURL_ERROR_SIZE] = {};
  set_options(easy.get(), request, headers.get(), transfer, error_buffer);

  // The multi interface waits in slices of kPollMs, so a cancel is seen even while no byte arrives.
  curl_multi_add_handle(multi.get(), easy.get());
  int running = 1;
  bool cancelled = false;
  while (running > 0) {
    if (curl_multi_perform(multi.get(), &running) != CURLM_OK) break;
    if (running == 0) break;
    if (cancel != nullptr && cancel->load()) {
      cancelled = true;
      break;
    }
    curl_multi_poll(multi.get(), nullptr, 0, kPollMs, nullptr);
  }
  CURLcode code = CURLE_OK;
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
    if (msg->msg == CURLMSG_DONE) code = msg->data.result;
  }
  curl_multi_remove_handle(multi.get(), easy.get());

  if (cancelled || transfer.stopped_by_sink || (cancel != nullptr && cancel->load())) {
    throw HttpError(HttpFailure::Cancelled, what + ": cancelled");
  }
  HttpResponse response;
  curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &response.status);
  if (code != CURLE_OK) {
    const HttpFailure failure = failure_of(code);
    const std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    throw HttpError(failure, what + ": " + failure_words(failure) + " (" + detail + ")");
  }
  if (!success_status(response.status)) {
    throw HttpError(HttpFailure::Status, what + ": HTTP " + std::to_string(response.status) + ": " + answer_excerpt(transfer.body),
                    response.status, transfer.body);
  }
  const char* type = nullptr;
  curl_easy_getinfo(easy.get(), CURLINFO_CONTENT_TYPE, &type);
  if (type != nullptr) response.content_type = type;
  response.body = std::move(transfer.body);
  return response;
}

}  // namespace inferscope
