// "Server settings": where the Serve switch listens (host and port), the API key clients must send
// (asked for any host beyond this machine; kept for this run only, never written to disk, and
// INFERSCOPE_API_KEY's value when set) and the CORS origin to allow. OK is enabled only for settings
// the server accepts; the line under the fields says why not, or what clients will use. The host,
// port and origin persist in QSettings (serve_settings()).
#pragma once
#include <QDialog>

#include "core/server/openai_server.h"

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace inferscope::gui {

// The settings the Serve switch starts with: those saved, or loopback on 8080; the key from
// INFERSCOPE_API_KEY, if set.
ServeOptions serve_settings();
// Saves the host, port and origin (never the key).
void save_serve_settings(const ServeOptions& options);
// Why `options` cannot be served, or "" when they can.
QString serve_settings_problem(const ServeOptions& options);

class ServeDialog : public QDialog {
  Q_OBJECT
 public:
  ServeDialog(const ServeOptions& options, QWidget* parent = nullptr);
  ServeOptions options() const;
  QString verdict() const;  // the line under the fields

 private:
  void check();

  ServeOptions options_;
  QLineEdit *host_, *key_, *origin_;
  QSpinBox* port_;
  QLabel* verdict_;
  QDialogButtonBox* buttons_;
};

}  // namespace inferscope::gui
