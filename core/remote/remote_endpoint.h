// A remote inference server as the user names it: base URL, optional API key and model. Builds the
// URLs and headers of its OpenAI-compatible API; the key is never part of anything written to disk.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

struct RemoteEndpoint {
  std::string base_url;  // "http://host:port", normalised by make_endpoint
  std::string api_key;   // sent as "Authorization: Bearer KEY" when not empty
  std::string model;     // the request's "model" field; empty: the server's first model
};

// Checks and normalises a base URL: http:// or https://, a host, no query or fragment; a trailing "/"
// or "/v1" is dropped ("http://h:8000/v1/" -> "http://h:8000"). Throws std::invalid_argument naming
// the URL and what is wrong with it.
RemoteEndpoint make_endpoint(std::string_view url, std::string api_key = {}, std::string model = {});

// base_url + path ("/v1/chat/completions").
std::string endpoint_url(const RemoteEndpoint& endpoint, std::string_view path);

// The headers every request carries (the API key's, when there is one).
std::vector<std::string> endpoint_headers(const RemoteEndpoint& endpoint);

}  // namespace inferscope
