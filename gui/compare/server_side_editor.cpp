#include "gui/compare/server_side_editor.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include "core/remote/remote_endpoint.h"
#include "gui/remote/server_prober.h"

namespace inferscope::gui {
namespace {

constexpr double kProbeTimeoutS = 5;

// "llama.cpp (from /v1/models) · model tiny · context 512 · 1 slot".
QString describe(const ServerInfo& info, const std::string& model) {
  QString text = QString("%1 (from %2) · model %3")
                     .arg(QString::fromStdString(std::string(server_kind_name(info.kind))),
                          QString::fromStdString(info.detected_by), QString::fromStdString(model));
  if (info.context_length) text += QString(" · context %1").arg(*info.context_length);
  if (info.slot_count) text += QString(" · %1 slot%2").arg(*info.slot_count).arg(*info.slot_count == 1 ? "" : "s");
  return text;
}

}  // namespace

ServerSideEditor::ServerSideEditor(QWidget* parent)
    : QWidget(parent),
      url_(new QLineEdit),
      api_key_(new QLineEdit),
      model_(new QLineEdit),
      concurrency_(new QSpinBox),
      check_(new QPushButton("Check")),
      result_(new QLabel),
      prober_(new ServerProber(this)) {
  url_->setPlaceholderText("http://127.0.0.1:8080");
  url_->setToolTip("The server's base URL: llama-server, vLLM or SGLang (OpenAI-compatible API)");
  api_key_->setEchoMode(QLineEdit::Password);
  api_key_->setPlaceholderText("none");
  api_key_->setToolTip("Sent as a bearer token; kept in memory only, never exported or saved");
  model_->setPlaceholderText("the server's first model");
  concurrency_->setRange(0, 4096);
  concurrency_->setSpecialValueText("unlimited");
  concurrency_->setToolTip("Requests the client keeps in flight at most; later arrivals wait for a free slot");
  check_->setToolTip("Ask the server what it is and what it serves (off the GUI thread, 5 s at most)");
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  show_result("Not checked yet: press Check.", "#6b7280");

  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  form->setVerticalSpacing(3);
  form->addRow("URL", url_);
  form->addRow("API key", api_key_);
  form->addRow("model", model_);
  form->addRow("concurrency", concurrency_);
  auto* check_row = new QHBoxLayout;
  check_row->addWidget(check_);
  check_row->addWidget(result_, 1);
  form->addRow(check_row);

  for (QLineEdit* field : {url_, api_key_, model_}) connect(field, &QLineEdit::textChanged, this, &ServerSideEditor::invalidate);
  connect(check_, &QPushButton::clicked, this, &ServerSideEditor::check);
  connect(prober_, &ServerProber::finished, this, &ServerSideEditor::take_probe);
}

void ServerSideEditor::name_widgets(const QString& prefix) {
  url_->setObjectName(prefix + "server_url");
  api_key_->setObjectName(prefix + "server_api_key");
  model_->setObjectName(prefix + "server_model");
  concurrency_->setObjectName(prefix + "server_concurrency");
  check_->setObjectName(prefix + "server_check");
  result_->setObjectName(prefix + "server_result");
}

void ServerSideEditor::set_fields(const QString& url, const QString& api_key, const QString& model, int max_concurrency) {
  url_->setText(url);
  api_key_->setText(api_key);
  model_->setText(model);
  concurrency_->setValue(max_concurrency);
}

void ServerSideEditor::invalidate() {
  prober_->forget_pending();
  checked_.reset();
  last_error_.clear();
  check_->setEnabled(true);
  show_result("Changed: press Check.", "#6b7280");
}

void ServerSideEditor::check() {
  RemoteEndpoint endpoint;
  try {
    endpoint = make_endpoint(url_->text().trimmed().toStdString(), api_key_->text().toStdString(), model_->text().trimmed().toStdString());
  } catch (const std::exception& e) {
    invalidate();
    last_error_ = e.what();
    show_result("✗ " + last_error_, "#b91c1c");
    emit checked();
    return;
  }
  checked_.reset();
  check_->setEnabled(false);
  show_result("Checking " + QString::fromStdString(endpoint.base_url) + "…", "#374151");
  prober_->probe(endpoint, kProbeTimeoutS);
}

void ServerSideEditor::take_probe(const ProbeReport& report) {
  check_->setEnabled(true);
  const RemoteEndpoint& endpoint = report.endpoint;
  if (!report.info) {
    last_error_ = report.error.simplified();
    show_result("✗ " + last_error_, "#b91c1c");
  } else if (endpoint.model.empty() && report.info->models.empty()) {
    last_error_ = "the server lists no model at " + QString::fromStdString(endpoint_url(endpoint, "/v1/models")) + ": name one";
    show_result("✗ " + last_error_, "#b91c1c");
  } else {
    RemoteSide side{endpoint, *report.info, concurrency_->value()};
    if (side.endpoint.model.empty()) side.endpoint.model = report.info->models.front();
    show_result("✓ " + describe(*report.info, side.endpoint.model), "#047857");
    checked_ = std::move(side);
  }
  emit checked();
}

std::optional<RemoteSide> ServerSideEditor::side(QString* error) const {
  if (checked_) {
    RemoteSide side = *checked_;
    side.max_concurrency = concurrency_->value();
    return side;
  }
  if (checking()) {
    *error = "still checking the server";
  } else if (!last_error_.isEmpty()) {
    *error = "the check failed (" + last_error_ + "): fix the URL or start the server, then press Check";
  } else {
    *error = "press Check first, so that the server is known to answer";
  }
  return std::nullopt;
}

bool ServerSideEditor::checking() const { return prober_->busy(); }

QString ServerSideEditor::result_text() const { return result_->text(); }

void ServerSideEditor::show_result(const QString& text, const char* colour) {
  result_->setStyleSheet(QString("color:%1;").arg(colour));
  result_->setText(text);
}

}  // namespace inferscope::gui
