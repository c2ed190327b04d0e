// What persists between runs in QSettings (a scratch folder here, never the user's): the engine
// configuration (round trip; bad stored values skipped with a message naming the key; restored when the
// first model loads, and a configuration the engine refuses falls back to the defaults without
// blocking the model) and the window layout (geometry and splitter sizes).
#include <QSignalSpy>
#include <QSplitter>
#include "gui/app/status_note.h"

#include "gui/app/engine_settings.h"
#include "gui/app/window_layout.h"
#include "gui/config/config_panel.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

QString stories_model() { return QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")); }

// Settings in an INI file of their own (the format QSettings uses on Linux), so values go through text.
struct ScratchSettings {
  QTemporaryDir dir;
  QSettings settings{dir.filePath("inferscope.conf"), QSettings::IniFormat};
};

EngineConfig changed_config() {
  EngineConfig c;
  c.kv.kind = KvKind::Contiguous;
  c.kv.budget_bytes = size_t{64} << 20;
  c.attention = "naive";
  c.kv_dtype = DType::F32;
  c.quant = WeightQuant::Q8;
  c.scheduler.max_batch_tokens = 96;
  c.threads = 1;
  c.spec.mode = SpecMode::Ngram;
  c.spec.k = 3;
  c.spec.draft_p_min = 0.5f;
  c.device = ComputeDevice{true, 0};
  return c;
}

TEST(EngineSettings, RoundTripThroughAnIniFile) {
  test_app();
  ScratchSettings s;
  save_engine_config(s.settings, changed_config());
  s.settings.sync();
  const QSettings reread(s.settings.fileName(), QSettings::IniFormat);
  const StoredEngineConfig stored = load_engine_config(reread, EngineConfig{});
  EXPECT_TRUE(stored.found);
  EXPECT_TRUE(stored.problems.isEmpty()) << stored.problems.join('\n').toStdString();
  EXPECT_EQ(stored.config.kv.kind, KvKind::Contiguous);
  EXPECT_EQ(stored.config.kv.budget_bytes, size_t{64} << 20);
  EXPECT_EQ(stored.config.attention, "naive");
  EXPECT_EQ(stored.config.kv_dtype, DType::F32);
  EXPECT_EQ(stored.config.quant, WeightQuant::Q8);
  EXPECT_EQ(stored.config.scheduler.max_batch_tokens, 96);
  EXPECT_EQ(stored.config.threads, 1);
  EXPECT_EQ(stored.config.spec.mode, SpecMode::Ngram);
  EXPECT_EQ(stored.config.spec.k, 3);
  EXPECT_FLOAT_EQ(stored.config.spec.draft_p_min, 0.5f);
  EXPECT_EQ(stored.config.device, ComputeDevice{}) << "the device is chosen each session, never restored";
}

TEST(EngineSettings, NothingStoredGivesTheDefaults) {
  test_app();
  ScratchSettings s;
  const StoredEngineConfig stored = load_engine_config(s.settings, changed_config());
  EXPECT_FALSE(stored.found);
  EXPECT_TRUE(stored.problems.isEmpty());
  EXPECT_EQ(stored.config.attention, "naive");
}

TEST(EngineSettings, BadStoredValuesAreSkippedNamingTheKey) {
  test_app();
  ScratchSettings s;
  save_engine_config(s.settings, changed_config());
  s.settings.setValue("engine/kv", "sideways");
  s.settings.setValue("engine/block_size", "many");
  s.settings.setValue("engine/prefix_cache", "perhaps");
  s.settings.setValue("engine/kv_budget_mib", "-5");
  const StoredEngineConfig stored = load_engine_config(s.settings, EngineConfig{});
  ASSERT_EQ(stored.problems.size(), 4) << stored.problems.join('\n').toStdString();
  const QString all = stored.problems.join('\n');
  for (const char* expected : {"engine/kv = 'sideways' is not one of paged, contiguous", "engine/block_size = 'many'",
                               "engine/prefix_cache = 'perhaps'", "engine/kv_budget_mib = '-5'"}) {
    EXPECT_TRUE(all.contains(expected)) << expected << " not in " << all.toStdString();
  }
  EXPECT_TRUE(all.contains(s.settings.fileName())) << all.toStdString();
  // The good values still apply; the bad ones keep the defaults.
  EXPECT_EQ(stored.config.attention, "naive");
  EXPECT_EQ(stored.config.kv.kind, EngineConfig{}.kv.kind);
  EXPECT_EQ(stored.config.kv.block_size, EngineConfig{}.kv.block_size);
  EXPECT_EQ(stored.config.kv.budget_bytes, EngineConfig{}.kv.budget_bytes);
}

TEST(EngineSettings, TheSavedConfigurationIsRestoredWhenTheModelLoads) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  test_app();
  {
    QSettings settings;
    EngineConfig saved = default_engine_config();
    saved.attention = "naive";
    saved.kv_dtype = DType::F32;
    save_engine_config(settings, saved);
    settings.setValue("engine/block_size", "many");  // skipped, and said so
  }
  QTemporaryDir sessions;
  auto w = open_window(sessions.path());
  EXPECT_FALSE(w->bridge().has_engine());
  EXPECT_EQ(w->bridge().config().attention, "flash");  // nothing is sent before a model is open
  w->open_model(stories_model());
  // The panel follows once the engine has taken it.
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine() && w->config_panel()->config().attention == "naive"; }));
  EXPECT_EQ(w->bridge().config().attention, "naive");
  EXPECT_EQ(w->bridge().config().kv_dtype, DType::F32);
  const QString status = w->status_note()->message();
  EXPECT_TRUE(status.startsWith("Restored the saved engine configuration")) << status.toStdString();
  EXPECT_TRUE(status.contains("engine/block_size = 'many'")) << status.toStdString();
}

TEST(EngineSettings, AModelSwitchSaysWhichSettingsItKept) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir sessions;
  auto w = open_window(sessions.path(), stories_model());
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine() && !w->showing_welcome(); }));
  EngineConfig q8 = w->bridge().config();
  q8.quant = WeightQuant::Q8;
  q8.attention = "naive";
  w->bridge().set_config(q8);
  ASSERT_TRUE(wait_for([&] { return w->bridge().config().quant == WeightQuant::Q8; }, 60000));
  // Opening another model (here the same file again) keeps the settings, and the status bar lists them.
  QSignalSpy loaded(&w->bridge(), &EngineBridge::model_loaded);
  w->open_model(stories_model());
  ASSERT_TRUE(wait_for([&] { return loaded.count() > 0; }));
  const QString status = w->status_note()->message();
  EXPECT_TRUE(status.startsWith("Opened stories260K.gguf keeping the engine settings in use: ")) << status.toStdString();
  EXPECT_TRUE(status.contains("weights q8")) << status.toStdString();
  EXPECT_TRUE(status.contains("naive")) << status.toStdString();
  // The chat says the template is guessed (stories260K has none).
  EXPECT_TRUE(w->chat()->template_notice_text().startsWith("No chat template in the file"))
      << w->chat()->template_notice_text().toStdString();
}

TEST(EngineSettings, ARefusedSavedConfigurationFallsBackToTheDefaults) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  test_app();
  {
    QSettings settings;
    EngineConfig saved = default_engine_config();
    saved.spec.mode = SpecMode::EarlyExit;  // a valid setting the engine refuses for this model:
    saved.spec.draft_layers = 999;          // it has 5 layers
    save_engine_config(settings, saved);
  }
  QTemporaryDir sessions;
  auto w = open_window(sessions.path());
  QStringList errors;
  QObject::connect(w.get(), &MainWindow::error_shown, [&](const QString& e) { errors << e; });
  w->open_model(stories_model());
  ASSERT_TRUE(wait_for([&] { return w->status_note()->message().startsWith("The saved engine configuration was not applied"); }))
      << w->status_note()->message().toStdString();
  EXPECT_TRUE(w->bridge().has_engine());
  EXPECT_FALSE(w->showing_welcome());
  EXPECT_EQ(w->bridge().config().attention, "flash");
  EXPECT_EQ(w->config_panel()->config().attention, "flash");
  EXPECT_TRUE(errors.isEmpty()) << errors.join('\n').toStdString();  // a status message, not a dialog
}

TEST(WindowLayout, GeometryAndSplitterSizesComeBack) {
  test_app();
  QTemporaryDir sessions;
  QList<int> sizes;
  QSize window_size;
  {
    auto w = open_window(sessions.path());
    w->resize(1300, 900);  // the width stays at least the window's minimum
    QApplication::processEvents();
    window_size = w->size();
    ASSERT_NE(window_size, QSize(1600, 1000));  // not the size a new window gets
    auto* splitter = w->findChild<QSplitter*>("chat_top_splitter");
    ASSERT_NE(splitter, nullptr);
    splitter->setSizes({500, 700});
    sizes = splitter->sizes();
    w->close();
  }
  auto w = open_window(sessions.path());
  EXPECT_EQ(w->size(), window_size);
  EXPECT_EQ(w->findChild<QSplitter*>("chat_top_splitter")->sizes(), sizes);
}

}  // namespace
}  // namespace inferscope::gui::test
