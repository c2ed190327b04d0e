#include "core/remote/remote_endpoint.h"

#include <stdexcept>

namespace inferscope {

RemoteEndpoint make_endpoint(std::string_view url, std::string api_key, std::string model) {
  std::string base(url);
  const auto bad = [&](const std::string& why) { return std::invalid_argument("server URL '" + base + "': " + why); };
  const size_t scheme_end = base.find("://");
  if (scheme_end == std::string::npos) throw bad("give it as http://host:port or https://host:port");
  const std::string scheme = base.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") throw bad("the scheme must be http or https, not " + scheme);
  if (base.find_first_of("?#") != std::string::npos) throw bad("a base URL has no query or fragment");
  if (base.find_first_of(" \t\r\n") != std::string::npos) throw bad("it contains white space");
  const size_t host_start = scheme_end + 3;
  const size_t host_end = base.find('/', host_start);
  if (base.substr(host_start, host_end - host_start).empty()) throw bad("it names no host");
  RemoteEndpoint e;
  e.base_url = base;
  while (!e.base_url.empty() && e.base_url.back() == '/') e.base_url.pop_back();
  // The OpenAI API lives under /v1; people often paste the base URL with it.
  if (e.base_url.size() > host_start + 3 && e.base_url.ends_with("/v1")) e.base_url.resize(e.base_url.size() - 3);
  e.api_key = std::move(api_key);
  e.model = std::move(model);
  return e;
}

std::string endpoint_url(const RemoteEndpoint& endpoint, std::string_view path) { return endpoint.base_url + std::string(path); }

std::vector<std::string> endpoint_headers(const RemoteEndpoint& endpoint) {
  if (endpoint.api_key.empty()) return {};
  return {"Authorization: Bearer " + endpoint.api_key};
}

}  // namespace inferscope
