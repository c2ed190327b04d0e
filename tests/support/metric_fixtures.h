// The hand-written /metrics bodies of tests/fixtures/metrics, parsed.
#pragma once
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/remote/metric_snapshot.h"

namespace inferscope::test {

inline MetricSnapshot metrics_fixture(const std::string& name) {
  const std::string path = std::string(INFERSCOPE_SOURCE_DIR) + "/tests/fixtures/metrics/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  std::stringstream body;
  body << in.rdbuf();
  return MetricSnapshot::parse(body.str());
}

}  // namespace inferscope::test
