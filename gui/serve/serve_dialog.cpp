#include "gui/serve/serve_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace inferscope::gui {
namespace {

// The key the user gave this run (or the environment's): kept in memory only.
QString& session_key() {
  static QString key = qEnvironmentVariable("INFERSCOPE_API_KEY");
  return key;
}

}  // namespace

ServeOptions serve_settings() {
  const QSettings settings;
  ServeOptions options;
  options.host = settings.value("serve/host", QString::fromStdString(options.host)).toString().toStdString();
  options.port = settings.value("serve/port", options.port).toInt();
  options.cors_origin = settings.value("serve/cors_origin").toString().toStdString();
  options.api_key = session_key().toStdString();
  return options;
}

void save_serve_settings(const ServeOptions& options) {
  QSettings settings;
  settings.setValue("serve/host", QString::fromStdString(options.host));
  settings.setValue("serve/port", options.port);
  settings.setValue("serve/cors_origin", QString::fromStdString(options.cors_origin));
  session_key() = QString::fromStdString(options.api_key);
}

QString serve_settings_problem(const ServeOptions& options) {
  if (options.host.empty()) return QObject::tr("Enter the address to listen on (127.0.0.1: this machine only).");
  if (options.port < 0 || options.port > 65535) return QObject::tr("The port must be 0 (any free one) to 65535.");
  if (!loopback_host(options.host) && options.api_key.empty()) {
    return QObject::tr("%1 lets other machines connect: set an API key that they must send.").arg(QString::fromStdString(options.host));
  }
  return {};
}

ServeDialog::ServeDialog(const ServeOptions& options, QWidget* parent)
    : QDialog(parent),
      options_(options),
      host_(new QLineEdit(QString::fromStdString(options.host))),
      key_(new QLineEdit(QString::fromStdString(options.api_key))),
      origin_(new QLineEdit(QString::fromStdString(options.cors_origin))),
      port_(new QSpinBox),
      verdict_(new QLabel),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel)) {
  setWindowTitle(tr("Server settings"));
  setMinimumWidth(fontMetrics().averageCharWidth() * 64);  // the placeholders and the URL line whole
  host_->setObjectName("serve_host");
  key_->setObjectName("serve_key");
  origin_->setObjectName("serve_origin");
  port_->setRange(0, 65535);
  port_->setSpecialValueText(tr("any free port"));
  port_->setValue(options.port);
  key_->setEchoMode(QLineEdit::Password);
  key_->setPlaceholderText(tr("none (this machine only)"));
  key_->setToolTip(tr("Clients send it as 'Authorization: Bearer KEY'. Kept for this run only, never written to disk."));
  origin_->setPlaceholderText(tr("none: no CORS headers"));
  origin_->setToolTip(tr("A web page's origin (https://example.org) allowed to call the server from a browser."));
  host_->setToolTip(tr("127.0.0.1 or localhost: this machine only. 0.0.0.0: every network, and then a key is required."));
  verdict_->setWordWrap(true);
  auto* form = new QFormLayout;
  form->addRow(tr("Listen on"), host_);
  form->addRow(tr("Port"), port_);
  form->addRow(tr("API key"), key_);
  form->addRow(tr("CORS origin"), origin_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(verdict_);
  layout->addWidget(buttons_);
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  for (QLineEdit* edit : {host_, key_, origin_}) connect(edit, &QLineEdit::textChanged, this, &ServeDialog::check);
  connect(port_, &QSpinBox::valueChanged, this, &ServeDialog::check);
  check();
}

ServeOptions ServeDialog::options() const {
  ServeOptions o = options_;
  o.host = host_->text().trimmed().toStdString();
  o.port = port_->value();
  o.api_key = key_->text().toStdString();
  o.cors_origin = origin_->text().trimmed().toStdString();
  return o;
}

QString ServeDialog::verdict() const { return verdict_->text(); }

void ServeDialog::check() {
  const ServeOptions o = options();
  const QString problem = serve_settings_problem(o);
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
  const QString port = o.port == 0 ? tr("PORT (a free one, shown once serving)") : QString::number(o.port);
  verdict_->setText(problem.isEmpty() ? tr("Clients will use http://%1:%2/v1 as their OpenAI base URL.")
                                            .arg(QString::fromStdString(o.host), port)
                                      : problem);
}

}  // namespace inferscope::gui
