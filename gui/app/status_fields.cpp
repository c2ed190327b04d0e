#include "gui/app/status_fields.h"

#include <QHBoxLayout>
#include <QLabel>

#include "gui/dashboard/metrics_series.h"
#include "gui/help/help_texts.h"
#include "gui/model/model_info_panel.h"

namespace inferscope::gui {

namespace {

QLabel* add_field(QHBoxLayout* row, const char* key) {
  if (row->count() > 0) row->addWidget(new QLabel(QStringLiteral("·")));
  auto* label = new QLabel;
  label->setObjectName(QLatin1String(key));
  label->setToolTip(help_html(help_text(key)));
  row->addWidget(label);
  return label;
}

}  // namespace

StatusFields::StatusFields(QWidget* parent) : QWidget(parent) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(4);
  running_ = add_field(row, "status_running");
  waiting_ = add_field(row, "status_waiting");
  kv_ = add_field(row, "status_kv");
  decode_ = add_field(row, "status_engine_decode");
  weights_ = add_field(row, "status_weights");
  conversion_ = add_field(row, "status_conversion");
  serving_ = add_field(row, "status_serving");
  // Until the first metrics only the first label speaks.
  for (QWidget* w : findChildren<QLabel*>()) w->setVisible(w == running_);
  running_->setText(QStringLiteral("no model"));
}

void StatusFields::show_metrics(const EngineMetricsSnapshot& m) {
  for (QLabel* w : {running_, waiting_, kv_, decode_, weights_}) set_field_visible(w, true);
  running_->setText(QStringLiteral("running %1").arg(m.num_requests_running));
  waiting_->setText(QStringLiteral("waiting %1").arg(m.num_requests_waiting));
  const std::optional<double> kv = reported_kv_usage(m);
  kv_->setText(kv ? QStringLiteral("KV %1%").arg(*kv * 100, 0, 'f', 0) : QStringLiteral("KV not reported"));
  const QString engine = m.source.empty() ? QStringLiteral("engine") : QStringLiteral("server");
  const std::optional<double> rate = decode_rate_now(m);
  decode_->setText(rate ? QStringLiteral("%1: %2 tok/s decode (all requests)").arg(engine).arg(*rate, 0, 'f', 1)
                        : QStringLiteral("%1: idle").arg(engine));
  weights_->setText(m.source.empty() ? weights_text(m) : QStringLiteral("weights: the server's"));
  const bool converting = !m.converting_to.empty();
  conversion_->setText(converting ? QStringLiteral("converting to %1 %2%")
                                        .arg(QString::fromStdString(m.converting_to))
                                        .arg(m.conversion_progress * 100, 0, 'f', 0)
                                  : QString());
  set_field_visible(conversion_, converting);
}

void StatusFields::show_serving(const QString& url, bool starting, int32_t running, int64_t served) {
  set_field_visible(serving_, starting || !url.isEmpty());
  serving_->setText(url.isEmpty() ? QStringLiteral("serving: starting…")
                                  : QStringLiteral("serving %1/v1 (%2 running, %3 served)").arg(url).arg(running).arg(served));
}

void StatusFields::set_field_visible(QLabel* field, bool visible) {
  const int index = layout()->indexOf(field);
  if (index > 0) layout()->itemAt(index - 1)->widget()->setVisible(visible);
  field->setVisible(visible);
}

QString StatusFields::text() const {
  QStringList parts;
  for (QLabel* label : {running_, waiting_, kv_, decode_, weights_, conversion_, serving_})
    if (!label->isHidden() && !label->text().isEmpty()) parts << label->text();
  return parts.join(QStringLiteral(" · "));
}

QLabel* StatusFields::field(const QString& key) const { return findChild<QLabel*>(key); }

QString StatusFields::weights_text(const EngineMetricsSnapshot& m) {
  return QStringLiteral("weights %1 (%2)")
      .arg(QString::fromStdString(m.weights_quant), format_bytes(static_cast<double>(m.weight_bytes)));
}

}  // namespace inferscope::gui
