#include "gui/chat/sampling_editor.h"

#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <limits>

namespace inferscope::gui {
namespace {

QDoubleSpinBox* real_box(double lo, double hi, double step, int decimals) {
  auto* box = new QDoubleSpinBox;
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setDecimals(decimals);
  return box;
}

QSpinBox* int_box(int lo, int hi) {
  auto* box = new QSpinBox;
  box->setRange(lo, hi);
  return box;
}

}  // namespace

SamplingEditor::SamplingEditor(QWidget* parent)
    : QWidget(parent),
      temperature_(real_box(0, 2, 0.05, 2)),
      top_p_(real_box(0, 1, 0.05, 2)),
      min_p_(real_box(0, 1, 0.01, 2)),
      repeat_penalty_(real_box(0.5, 2, 0.05, 2)),
      top_k_(int_box(0, 1000)),
      seed_(int_box(0, std::numeric_limits<int>::max())),
      max_tokens_(int_box(1, 32768)) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setHorizontalSpacing(6);
  grid->setVerticalSpacing(2);
  struct Field { const char* label; QWidget* box; const char* tip; };
  const Field fields[] = {
      {"temp", temperature_, "Temperature: divides the logits; 0 = greedy (always the most likely token)"},
      {"top-k", top_k_, "Keep only the k most likely tokens before drawing; 0 = off"},
      {"top-p", top_p_, "Keep the smallest set of tokens whose probabilities add up to p; 1 = off"},
      {"min-p", min_p_, "Drop tokens less likely than min-p x the most likely one; 0 = off"},
      {"repeat", repeat_penalty_, "Repetition penalty on tokens seen in the last 64; 1 = off"},
      {"seed", seed_, "Seed of the draw: the same seed and settings give the same reply"},
      {"max tokens", max_tokens_, "The longest reply, in tokens"},
  };
  int column = 0;
  for (const Field& f : fields) {
    auto* label = new QLabel(f.label);
    label->setToolTip(f.tip);
    f.box->setToolTip(f.tip);
    grid->addWidget(label, 0, column);
    grid->addWidget(f.box, 1, column);
    ++column;
  }
  for (QDoubleSpinBox* b : {temperature_, top_p_, min_p_, repeat_penalty_}) {
    connect(b, &QDoubleSpinBox::valueChanged, this, &SamplingEditor::changed);
  }
  for (QSpinBox* b : {top_k_, seed_, max_tokens_}) connect(b, &QSpinBox::valueChanged, this, &SamplingEditor::changed);
}

void SamplingEditor::set_values(const SamplingParams& p, int32_t max_tokens) {
  const QSignalBlocker blocks[] = {QSignalBlocker(temperature_), QSignalBlocker(top_p_), QSignalBlocker(min_p_),
                                   QSignalBlocker(repeat_penalty_), QSignalBlocker(top_k_), QSignalBlocker(seed_),
                                   QSignalBlocker(max_tokens_)};
  base_ = p;
  temperature_->setValue(p.temperature);
  top_k_->setValue(p.top_k);
  top_p_->setValue(p.top_p);
  min_p_->setValue(p.min_p);
  repeat_penalty_->setValue(p.repeat_penalty);
  seed_->setValue(static_cast<int>(std::min<uint64_t>(p.seed, std::numeric_limits<int>::max())));
  max_tokens_->setValue(max_tokens);
}

SamplingParams SamplingEditor::params() const {
  SamplingParams p = base_;
  p.temperature = static_cast<float>(temperature_->value());
  p.top_k = top_k_->value();
  p.top_p = static_cast<float>(top_p_->value());
  p.min_p = static_cast<float>(min_p_->value());
  p.repeat_penalty = static_cast<float>(repeat_penalty_->value());
  p.seed = static_cast<uint64_t>(seed_->value());
  return p;
}

int32_t SamplingEditor::max_tokens() const { return max_tokens_->value(); }

}  // namespace inferscope::gui
