// A failed model load explained in words a user can act on, for each way a file goes wrong: checked
// on real files through LlamaModel::load, so the summary follows what the loader actually says.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/model/llama_model.h"
#include "core/model/load_error.h"
#include "tests/support/synthetic_model.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// The summary of loading `path`, or "" when it loads.
std::string summary_of(const std::string& path) {
  try {
    LlamaModel::load(path);
  } catch (const std::exception& e) {
    return load_error_summary(e.what());
  }
  return "";
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(LoadError, NotAGgufFile) {
  EXPECT_EQ(summary_of(write_file("notes.gguf", "# some markdown, not a model\n")),
            "This is not a GGUF file. Inferscope opens models in the GGUF format, the files named *.gguf that "
            "llama.cpp uses.");
}

TEST(LoadError, AFileCutShort) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  EXPECT_EQ(summary_of(write_file("cut.gguf", head)),
            "The file ends before its contents do: an unfinished download or a copy cut short. Download or copy it again.");
}

TEST(LoadError, AnArchitectureNotRun) {
  test::SyntheticModelSpec spec;
  spec.architecture = "mamba";
  const std::string path = ::testing::TempDir() + "/mamba.gguf";
  test::write_synthetic_model(spec, path);
  const std::string summary = summary_of(path);
  EXPECT_TRUE(summary.starts_with("The model's architecture is not one Inferscope runs (it runs llama")) << summary;
}

TEST(LoadError, AFileThatCannotBeOpenedOrIsEmpty) {
  const std::string expected = "The file cannot be read as a model: it is missing, empty, not a regular file, or not readable.";
  EXPECT_EQ(summary_of(::testing::TempDir() + "/no-such-model.gguf"), expected);
  EXPECT_EQ(summary_of(write_file("empty.gguf", "")), expected);
  EXPECT_EQ(summary_of(::testing::TempDir()), expected) << "a folder";
}

TEST(LoadError, AnyOtherProblemIsAGgufFileThatIsNotAModel) {
  EXPECT_EQ(load_error_summary("m.gguf: tensor 'output_norm.weight': not in the file"),
            "The file is a GGUF file, but not a model Inferscope can read: one of its fields or tensors is not what the "
            "model needs.");
}

}  // namespace
}  // namespace inferscope
