// "Connect to server": the URL of an OpenAI-compatible server (llama-server, vLLM, SGLang), an
// optional API key (never written to disk), and the model to use, picked from the server's
// /v1/models once "Check" has asked it (off the GUI thread: the dialog stays responsive, and closing
// it mid-check is safe). The check says what answered ("llama.cpp · 4 slots · context 512 · model X")
// or what went wrong (bad URL, nothing listening, no answer in time, HTTP error with the server's
// message, TLS). OK is enabled only after a successful check of the URL and key as they stand.
// Recently used servers (URL and model) are listed for one click.
#pragma once
#include <QDialog>
#include <QString>

#include "core/remote/remote_endpoint.h"
#include "core/remote/server_probe.h"

class QComboBox;
class QDialogButtonBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace inferscope::gui {

struct ProbeReport;
class ServerProber;

class ConnectDialog : public QDialog {
  Q_OBJECT
 public:
  static constexpr double kDefaultProbeTimeoutS = 5;

  explicit ConnectDialog(QWidget* parent = nullptr);

  // The checked server with the model chosen in the combo box (valid once OK is enabled).
  RemoteEndpoint endpoint() const;
  // What the check found.
  ServerInfo server_info() const { return info_; }
  // How long each of the check's requests may take (tests shorten it).
  void set_probe_timeout(double seconds);
  // Adds the endpoint's URL and model (never its key) to the recent list in QSettings; accept() does
  // it for the endpoint connected to.
  static void remember_endpoint(const RemoteEndpoint& endpoint);

 public slots:
  // Checks the URL and key in the fields: a bad URL is reported at once, anything else when the
  // server has answered or failed to.
  void check();
  void accept() override;

 signals:
  // A check ended: ok when the server answered and its models are listed.
  void check_finished(bool ok);

 private:
  void show_report(const ProbeReport& report);
  void forget_check();
  void show_status(const QString& text, bool error);
  void fill_recent();

  QLineEdit* url_;
  QLineEdit* key_;
  QComboBox* model_;
  QPushButton* check_button_;
  QLabel* status_;
  QGroupBox* recent_box_;
  QListWidget* recent_;
  QDialogButtonBox* buttons_;
  ServerProber* prober_;
  double probe_timeout_s_ = kDefaultProbeTimeoutS;
  RemoteEndpoint checked_;  // the endpoint of the last successful check (its model: the combo's)
  ServerInfo info_;
  QString wanted_model_;    // picked from the recent list: selected once the check lists it
};

}  // namespace inferscope::gui
