#include "gui/config/spec_fields.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QStackedWidget>

#include "gui/config/field_widgets.h"
#include "gui/config/file_picker.h"

namespace inferscope::gui {
namespace {

// In SpecMode order: the mode combo's items and the drafter's pages follow it.
constexpr WeightQuant kDraftLevels[] = {WeightQuant::Q4, WeightQuant::Q4_1, WeightQuant::Q8};

SpecMode shown_mode(const QComboBox* mode) { return kSpecModes[std::max(0, mode->currentIndex())].mode; }

bool model_draft(SpecMode m) { return m == SpecMode::Draft || m == SpecMode::SelfQuant || m == SpecMode::EarlyExit; }

// The n-gram page: "n  2 .. 8".
QWidget* ngram_page(QSpinBox* lo, QSpinBox* hi) {
  auto* page = new QWidget;
  auto* row = new QHBoxLayout(page);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel("n"));
  row->addWidget(lo, 1);
  row->addWidget(new QLabel(".."));
  row->addWidget(hi, 1);
  return page;
}

QLabel* nothing_page() {
  auto* label = new QLabel("nothing drafts");
  label->setStyleSheet("color:#9ca3af;");
  return label;
}

}  // namespace

SpecFields::SpecFields()
    : mode(combo(names_of(kSpecModes, [](const SpecModeInfo& m) { return m.name; }))),
      k(spin(SpecConfig::kAutoK, 16, 1)),
      drafter(new QStackedWidget),
      ngram_min(spin(1, 16, 1)),
      ngram_max(spin(1, 16, 1)),
      // Not capped at the target's layers: the engine names the valid range when it refuses.
      draft_layers(spin(1, 1024, 1, {}, " layers")),
      draft_model(new FilePicker("Choose a draft model", "GGUF models (*.gguf)")),
      draft_quant(combo(names_of(kDraftLevels, weight_quant_name))),
      draft_p_min(new QDoubleSpinBox) {
  draft_p_min->setRange(0, 1);
  draft_p_min->setSingleStep(0.05);
  draft_p_min->setDecimals(2);
  draft_p_min->setSpecialValueText("off");
  k->setSpecialValueText("auto");  // kAutoK, the spin box's lowest value
  // One page per mode, in kSpecModes order.
  drafter->addWidget(nothing_page());
  drafter->addWidget(ngram_page(ngram_min, ngram_max));
  drafter->addWidget(draft_model);
  drafter->addWidget(draft_quant);
  drafter->addWidget(draft_layers);
}

std::vector<ToggleRow> SpecFields::rows() const {
  const QString section = "Speculative decoding";
  return {
      {section, "speculation", mode,
       "A cheap proposer drafts tokens and the target checks them all in one pass: greedy output stays token for "
       "token the same, only faster when drafts are accepted."},
      {section, "draft tokens k", k,
       "Draft tokens per step. auto: each sequence drafts as many as its measured acceptance and the measured cost "
       "of longer steps say will pay, up to 8, and none where drafts would slow it down. 1-16: always up to that many."},
      {section, "drafter", drafter,
       "ngram: the n-grams earlier in the text; draft: a GGUF with the same vocabulary; self-quant: the target at a "
       "smaller level; early-exit: the target's first layers."},
      {section, "draft p-min", draft_p_min, "Model drafts stop once their top probability falls below this (off: always k)."},
  };
}

void SpecFields::show(const SpecConfig& s) {
  mode->setCurrentIndex(static_cast<int>(s.mode));
  k->setValue(s.k);
  ngram_min->setValue(s.ngram_min);
  ngram_max->setValue(s.ngram_max);
  draft_model->set_path(QString::fromStdString(s.draft_model));
  draft_quant->setCurrentText(qtext(weight_quant_name(s.draft_quant)));
  draft_layers->setValue(s.draft_layers);
  draft_p_min->setValue(s.draft_p_min);
}

SpecConfig SpecFields::read(SpecConfig s) const {
  // Only the settings the shown mode uses are read: the others keep their values, so a change of
  // another toggle never shows up as a change of speculation.
  s.mode = shown_mode(mode);
  if (!s.enabled()) return s;
  s.k = k->value();
  switch (s.mode) {
    case SpecMode::Ngram:
      s.ngram_min = ngram_min->value();
      s.ngram_max = ngram_max->value();
      break;
    case SpecMode::Draft: s.draft_model = draft_model->path().toStdString(); break;
    case SpecMode::SelfQuant: s.draft_quant = kDraftLevels[std::max(0, draft_quant->currentIndex())]; break;
    case SpecMode::EarlyExit: s.draft_layers = draft_layers->value(); break;
    case SpecMode::None: break;
  }
  if (model_draft(s.mode)) s.draft_p_min = static_cast<float>(draft_p_min->value());
  return s;
}

void SpecFields::refresh_enabled() {
  const SpecMode m = shown_mode(mode);
  drafter->setCurrentIndex(static_cast<int>(m));
  k->setEnabled(m != SpecMode::None);
  draft_p_min->setEnabled(model_draft(m));
}

QString SpecFields::missing() const {
  if (shown_mode(mode) == SpecMode::Draft && draft_model->path().isEmpty()) {
    return "Choose the draft model file (a GGUF with the target's vocabulary): speculation starts once one is picked.";
  }
  return {};
}

void SpecFields::on_change(QObject* ctx, const std::function<void()>& changed) {
  for (QComboBox* box : {mode, draft_quant}) QObject::connect(box, &QComboBox::currentIndexChanged, ctx, changed);
  QObject::connect(draft_model, &FilePicker::changed, ctx, changed);
  for (QSpinBox* box : {k, ngram_min, ngram_max, draft_layers}) on_new_value(box, ctx, changed);
  on_new_value(draft_p_min, ctx, changed);
}

void SpecFields::mark_applied() {
  for (QSpinBox* box : {k, ngram_min, ngram_max, draft_layers}) gui::mark_applied(box);
  gui::mark_applied(draft_p_min);
}

void SpecFields::name_widgets(const QString& prefix) {
  const std::pair<QWidget*, const char*> names[] = {
      {mode, "spec_mode"},           {k, "spec_k"},
      {drafter, "spec_drafter"},     {ngram_min, "spec_ngram_min"},
      {ngram_max, "spec_ngram_max"}, {draft_model, "spec_draft_model"},
      {draft_quant, "spec_draft_quant"}, {draft_layers, "spec_draft_layers"},
      {draft_p_min, "spec_draft_p_min"}};
  for (const auto& [widget, name] : names) widget->setObjectName(prefix + name);
}

}  // namespace inferscope::gui
