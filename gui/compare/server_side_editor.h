// The editor of a comparison side that runs on a server: its URL, API key (password echo; kept only
// in memory, never exported) and model, a client concurrency limit, and a Check button that probes
// the server off the GUI thread and shows what answers there (kind, models) or why nothing does.
// A side is ready only once the fields as they stand have been checked.
#pragma once
#include <QWidget>
#include <optional>

#include "gui/compare/remote_side.h"
#include "gui/remote/probe_report.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace inferscope::gui {
class ServerProber;
}

namespace inferscope::gui {

class ServerSideEditor : public QWidget {
  Q_OBJECT
 public:
  explicit ServerSideEditor(QWidget* parent = nullptr);

  // Object names prefix + "server_url", "server_api_key", "server_model", "server_concurrency",
  // "server_check", "server_result", for tests and the demo.
  void name_widgets(const QString& prefix);
  void set_fields(const QString& url, const QString& api_key, const QString& model, int max_concurrency = 0);
  // Probes the server the fields name, on a thread of its own; checked() follows on the GUI thread.
  void check();
  bool checking() const;
  // The side as checked, or nullopt with `error` saying what is missing (no check yet, a failed one).
  std::optional<RemoteSide> side(QString* error) const;
  QString result_text() const;

 signals:
  void checked();

 private:
  void invalidate();
  void take_probe(const ProbeReport& report);
  void show_result(const QString& text, const char* colour);

  QLineEdit *url_, *api_key_, *model_;
  QSpinBox* concurrency_;
  QPushButton* check_;
  QLabel* result_;
  std::optional<RemoteSide> checked_;
  QString last_error_;
  ServerProber* prober_;  // delivers only the answer about the fields as they stand
};

}  // namespace inferscope::gui
