#include "gui/remote/connect_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>
#include <stdexcept>

#include "gui/remote/probe_report.h"
#include "gui/remote/recent_endpoints.h"
#include "gui/remote/server_prober.h"

namespace inferscope::gui {
namespace {

// A recent entry's line: "http://h:8080 · model X" (or just the URL).
QString recent_line(const RecentEndpoint& r) { return r.model.isEmpty() ? r.url : r.url + QStringLiteral(" · ") + r.model; }

}  // namespace

ConnectDialog::ConnectDialog(QWidget* parent) : QDialog(parent), prober_(new ServerProber(this)) {
  setWindowTitle(tr("Connect to server"));
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  url_ = new QLineEdit(this);
  url_->setObjectName(QStringLiteral("url"));
  url_->setPlaceholderText(QStringLiteral("http://127.0.0.1:8080"));
  url_->setToolTip(tr("The server's base URL: llama-server, vLLM or SGLang (a trailing /v1 is fine)."));
  url_->setMinimumWidth(440);
  form->addRow(tr("Server URL"), url_);
  key_ = new QLineEdit(this);
  key_->setObjectName(QStringLiteral("api_key"));
  key_->setEchoMode(QLineEdit::Password);
  key_->setPlaceholderText(tr("optional"));
  form->addRow(tr("API key"), key_);
  auto* key_note = new QLabel(tr("Sent as a Bearer token to this server only; never written to disk."), this);
  key_note->setWordWrap(true);
  QFont small = key_note->font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  key_note->setFont(small);
  form->addRow(QString(), key_note);
  model_ = new QComboBox(this);
  model_->setObjectName(QStringLiteral("model"));
  model_->setEnabled(false);
  model_->setToolTip(tr("The models the server lists at /v1/models; filled by Check."));
  form->addRow(tr("Model"), model_);
  layout->addLayout(form);

  auto* check_row = new QHBoxLayout;
  check_button_ = new QPushButton(tr("Check"), this);
  check_button_->setObjectName(QStringLiteral("check"));
  check_button_->setToolTip(tr("Asks the server what it is and which models it serves."));
  status_ = new QLabel(tr("Enter the server's URL, then Check."), this);
  status_->setObjectName(QStringLiteral("status"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setMinimumHeight(3 * status_->fontMetrics().lineSpacing());
  status_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  check_row->addWidget(check_button_, 0, Qt::AlignTop);
  check_row->addWidget(status_, 1);
  layout->addLayout(check_row);

  recent_box_ = new QGroupBox(tr("Recent servers (click one to check it)"), this);
  auto* recent_layout = new QVBoxLayout(recent_box_);
  recent_ = new QListWidget(recent_box_);
  recent_->setObjectName(QStringLiteral("recent"));
  recent_->setMaximumHeight(5 * recent_->fontMetrics().lineSpacing() + 8);
  recent_layout->addWidget(recent_);
  layout->addWidget(recent_box_);
  fill_recent();

  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons_->button(QDialogButtonBox::Ok)->setText(tr("Connect"));
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(false);
  layout->addWidget(buttons_);

  connect(buttons_, &QDialogButtonBox::accepted, this, &ConnectDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &ConnectDialog::reject);
  connect(check_button_, &QPushButton::clicked, this, &ConnectDialog::check);
  connect(url_, &QLineEdit::returnPressed, this, &ConnectDialog::check);
  // A check answers for the URL and key it was given: editing either asks for a new one.
  connect(url_, &QLineEdit::textEdited, this, &ConnectDialog::forget_check);
  connect(key_, &QLineEdit::textEdited, this, &ConnectDialog::forget_check);
  connect(prober_, &ServerProber::finished, this, &ConnectDialog::show_report);
  connect(recent_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    url_->setText(item->data(Qt::UserRole).toString());
    wanted_model_ = item->data(Qt::UserRole + 1).toString();
    check();
  });
}

RemoteEndpoint ConnectDialog::endpoint() const {
  RemoteEndpoint e = checked_;
  e.model = model_->currentText().toStdString();
  return e;
}

void ConnectDialog::set_probe_timeout(double seconds) {
  if (!(seconds > 0)) throw std::invalid_argument("probe timeout must be positive, got " + std::to_string(seconds) + " s");
  probe_timeout_s_ = seconds;
}

void ConnectDialog::remember_endpoint(const RemoteEndpoint& endpoint) { inferscope::gui::remember_endpoint(endpoint); }

void ConnectDialog::check() {
  forget_check();
  RemoteEndpoint endpoint;
  try {
    endpoint = make_endpoint(url_->text().trimmed().toStdString(), key_->text().toStdString());
  } catch (const std::invalid_argument& e) {
    show_status(QString::fromStdString(e.what()), true);
    emit check_finished(false);
    return;
  }
  check_button_->setEnabled(false);
  show_status(tr("Checking %1 …").arg(QString::fromStdString(endpoint.base_url)), false);
  prober_->probe(endpoint, probe_timeout_s_);
}

void ConnectDialog::accept() {
  remember_endpoint(endpoint());
  QDialog::accept();
}

void ConnectDialog::show_report(const ProbeReport& report) {
  check_button_->setEnabled(true);
  if (!report.info) {
    show_status(report.error, true);
    emit check_finished(false);
    return;
  }
  checked_ = report.endpoint;
  info_ = *report.info;
  for (const std::string& id : info_.models) model_->addItem(QString::fromStdString(id));
  if (const int wanted = model_->findText(wanted_model_); wanted >= 0) model_->setCurrentIndex(wanted);
  const bool usable = model_->count() > 0;
  model_->setEnabled(usable);
  QString summary = server_summary(info_);
  if (const QString metrics = metrics_summary(info_); !metrics.isEmpty()) summary += QLatin1Char('\n') + metrics;
  if (!usable) summary += tr("\nThe server lists no model to use.");
  show_status(summary, !usable);
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(usable);
  emit check_finished(usable);
}

void ConnectDialog::forget_check() {
  prober_->forget_pending();
  check_button_->setEnabled(true);
  checked_ = {};
  info_ = {};
  model_->clear();
  model_->setEnabled(false);
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(false);
  show_status(tr("Check the server to list its models."), false);
}

void ConnectDialog::show_status(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? QStringLiteral("color: #b91c1c;") : QString());
}

void ConnectDialog::fill_recent() {
  for (const RecentEndpoint& r : recent_endpoints()) {
    auto* item = new QListWidgetItem(recent_line(r), recent_);
    item->setData(Qt::UserRole, r.url);
    item->setData(Qt::UserRole + 1, r.model);
  }
  recent_box_->setVisible(recent_->count() > 0);
}

}  // namespace inferscope::gui
