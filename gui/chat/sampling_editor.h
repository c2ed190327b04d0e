// The per-session sampling parameters: temperature, top-k, top-p, min-p, repeat penalty, seed and
// the reply length, in one compact grid; each field's tooltip says what it does.
#pragma once
#include <QWidget>

#include "core/sample/sampler.h"

class QDoubleSpinBox;
class QSpinBox;

namespace inferscope::gui {

class SamplingEditor : public QWidget {
  Q_OBJECT
 public:
  explicit SamplingEditor(QWidget* parent = nullptr);
  // Shows a session's values without emitting changed().
  void set_values(const SamplingParams& params, int32_t max_tokens);
  SamplingParams params() const;
  int32_t max_tokens() const;

 signals:
  void changed();

 private:
  SamplingParams base_;  // fields the editor does not show (repeat_last_n) keep their values
  QDoubleSpinBox *temperature_, *top_p_, *min_p_, *repeat_penalty_;
  QSpinBox *top_k_, *seed_, *max_tokens_;
};

}  // namespace inferscope::gui
