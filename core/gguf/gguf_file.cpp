#include "core/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/gguf/gguf_parser.h"

namespace inferscope {

int64_t GgufTensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // the parser has checked this product for overflow
  return n;
}

namespace {

[[noreturn]] void fail_errno(const std::string& path, const std::string& what) {
  throw GgufError(path + ": file: " + what + ": " + std::strerror(errno));
}

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_errno(path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    fail_errno(path, "cannot stat");
  }
  const auto close_and_fail = [&](const std::string& problem) {
    ::close(fd);
    throw GgufError(path + ": " + problem);
  };
  if (!S_ISREG(st.st_mode)) close_and_fail("file: is not a regular file");
  if (st.st_size == 0) close_and_fail("file: is empty");
  const auto size = static_cast<size_t>(st.st_size);
  // Read-only private mapping: the weights are never written through it.
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int saved = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (p == MAP_FAILED) {
    errno = saved;
    fail_errno(path, "cannot mmap");
  }
  std::unique_ptr<GgufFile> f(new GgufFile);
  f->path_ = path;
  f->base_ = static_cast<const uint8_t*>(p);
  f->size_ = size;
  f->mapped_ = true;
  GgufParser(*f).parse();  // on a throw, f's destructor unmaps
  return f;
}

std::unique_ptr<GgufFile> GgufFile::open_bytes(const uint8_t* data, size_t size, const std::string& name) {
  std::unique_ptr<GgufFile> f(new GgufFile);
  f->path_ = name;
  f->base_ = data;
  f->size_ = size;
  GgufParser(*f).parse();
  return f;
}

GgufFile::~GgufFile() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(base_), size_);
}

const GgufValue* GgufFile::find(const std::string& key) const {
  const auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

namespace {

// Looks up `key` and converts it with `conv`, turning a missing key or a bad type into a
// GgufError that names the file and the key.
template <typename Conv>
auto typed_get(const GgufFile& f, const std::string& key, Conv conv) -> decltype(conv(std::declval<const GgufValue&>())) {
  const GgufValue* v = f.find(key);
  if (!v) throw GgufError(f.path() + ": metadata '" + key + "': key is missing");
  try {
    return conv(*v);
  } catch (const std::runtime_error& e) {
    throw GgufError(f.path() + ": metadata '" + key + "': " + e.what());
  }
}

}  // namespace

int64_t GgufFile::get_int(const std::string& key) const {
  return typed_get(*this, key, [](const GgufValue& v) { return v.as_int(); });
}
double GgufFile::get_float(const std::string& key) const {
  return typed_get(*this, key, [](const GgufValue& v) { return v.as_float(); });
}
bool GgufFile::get_bool(const std::string& key) const {
  return typed_get(*this, key, [](const GgufValue& v) { return v.as_bool(); });
}
const std::string& GgufFile::get_string(const std::string& key) const {
  return typed_get(*this, key, [](const GgufValue& v) -> const std::string& { return v.as_string(); });
}
const GgufArray& GgufFile::get_array(const std::string& key) const {
  return typed_get(*this, key, [](const GgufValue& v) -> const GgufArray& { return v.as_array(); });
}

int64_t GgufFile::get_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}
double GgufFile::get_float_or(const std::string& key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}
bool GgufFile::get_bool_or(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}
std::string GgufFile::get_string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(const std::string& name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (!t) throw GgufError(path_ + ": tensor '" + name + "': not in the file");
  return *t;
}

}  // namespace inferscope
