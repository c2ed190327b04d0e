// The status bar's figures, one label each with its help (gui/help/help_texts.h) as tooltip:
// "running 1 · waiting 0 · KV 3% · engine: 107.0 tok/s decode (all requests) · weights q8 (35.2 MiB)"
// and, while one runs, "converting to q4 40%"; while the model is served, "serving
// http://127.0.0.1:8080/v1 (1 running, 12 served)". The engine's decode throughput counts every request
// together, as the dashboard's chart draws it (its last point), and reads "engine: idle" while no
// request runs; each chat reply's own speed is under the reply.
#pragma once
#include <QString>
#include <QWidget>

#include "core/engine/engine_metrics.h"

class QLabel;

namespace inferscope::gui {

class StatusFields : public QWidget {
  Q_OBJECT
 public:
  explicit StatusFields(QWidget* parent = nullptr);
  void show_metrics(const EngineMetricsSnapshot& m);
  // The server's base URL and its clients' requests in flight and since it started; an empty url
  // hides the field, and "starting" shows while it binds.
  void show_serving(const QString& url, bool starting, int32_t running, int64_t served);
  // The figures as one line, as shown ("no model" before the first metrics).
  QString text() const;
  // The label of one figure by its help key ("status_kv"), or null.
  QLabel* field(const QString& key) const;
  // "weights q8 (35.2 MiB)": also the top bar's, after the model.
  static QString weights_text(const EngineMetricsSnapshot& m);

 private:
  // Shows or hides `field` with the separator before it.
  void set_field_visible(QLabel* field, bool visible);

  QLabel *running_, *waiting_, *kv_, *decode_, *weights_, *conversion_, *serving_;
};

}  // namespace inferscope::gui
