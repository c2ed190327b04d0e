#include "gui/chat/chat_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <utility>
#include <QSettings>
#include <QShortcut>
#include <QTextBrowser>
#include <QToolButton>
#include <QUuid>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "core/engine/setting_table.h"
#include "core/model/llama_model.h"
#include "gui/bridge/engine_bridge.h"
#include "gui/chat/chat_render.h"
#include "gui/chat/sampling_editor.h"
#include "gui/chat/token_view.h"
#include "core/engine/config_overrides.h"
#include "gui/model/template_notice.h"

namespace inferscope::gui {
namespace {

int64_t now_ms() { return QDateTime::currentMSecsSinceEpoch(); }

constexpr const char* kGreedyRegenerateNote =
    "Temperature 0 is greedy: it picks the most likely token every time, so the same reply comes back. "
    "Raise temp (0.7, say) for a different one.";

QLabel* small_label(const QString& text = {}) {
  auto* label = new QLabel(text);
  label->setStyleSheet("color:#6b7280;");
  return label;
}

}  // namespace

ChatPanel::ChatPanel(EngineBridge& bridge, SessionStore store, QWidget* parent)
    : QWidget(parent),
      bridge_(bridge),
      store_(std::move(store)),
      list_(new QListWidget),
      new_button_(new QPushButton("+ New")),
      delete_button_(new QPushButton("Delete")),
      system_toggle_(new QToolButton),
      token_view_(new QCheckBox("per-token view")),
      token_legend_(new QLabel(token_view_legend())),
      system_(new QPlainTextEdit),
      view_(new QTextBrowser),
      error_(new QLabel),
      context_(small_label()),
      context_policy_(new QComboBox),
      template_notice_(template_notice_label()),
      sampling_(new SamplingEditor),
      input_(new QPlainTextEdit),
      send_(new QPushButton("Send")),
      stop_(new QPushButton("Stop")),
      regenerate_(new QPushButton("Regenerate")),
      export_(new QPushButton("Export…")) {
  // Left: the sessions.
  auto* sessions = new QVBoxLayout;
  sessions->addWidget(small_label("Sessions"));
  list_->setToolTip("Each session is its own conversation; sessions that send at once are batched together");
  list_->setMaximumWidth(170);
  sessions->addWidget(list_, 1);
  auto* session_buttons = new QHBoxLayout;
  session_buttons->addWidget(new_button_);
  session_buttons->addWidget(delete_button_);
  sessions->addLayout(session_buttons);

  // Right: the conversation.
  system_toggle_->setText("System prompt");
  system_toggle_->setCheckable(true);
  system_toggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  system_toggle_->setArrowType(Qt::RightArrow);
  system_toggle_->setToolTip("The instruction the model sees before the conversation (empty: the chat template's default)");
  token_view_->setObjectName("token_view");
  token_view_->setToolTip("Show each reply token by token, coloured by how it came: an accepted draft, corrected after "
                          "a refused draft, a bonus token, or plain decoding; refused drafts are struck through. "
                          "Hover a token for p(x) (the target) and q(x) (the draft)");
  token_legend_->setVisible(false);
  view_->setObjectName("chat_view");
  system_->setPlaceholderText("Empty: the chat template's default system prompt");
  system_->setMaximumHeight(60);
  system_->setVisible(false);
  view_->setOpenLinks(false);
  error_->setWordWrap(true);
  error_->setStyleSheet("color:#b91c1c; background:#fef2f2; padding:4px; border-radius:3px;");
  error_->setVisible(false);
  input_->setObjectName("chat_input");
  input_->setPlaceholderText("Message (Ctrl+Enter sends)");
  input_->setMaximumHeight(70);
  stop_->setObjectName("chat_stop");
  stop_->setToolTip("Cancel this reply between engine steps; its memory is freed at once");
  regenerate_->setToolTip("Drop the last reply and ask again (the prefix cache reuses the conversation's KV blocks). "
                          "At temp 0 (greedy) the same reply comes back: raise temp for another.");
  export_->setToolTip("Save this session (messages, sampling, engine configuration, reply timeline) as JSON; File ▸ Import chat session… opens such a file as a new session");

  context_policy_->setObjectName("context_policy");
  for (ContextPolicy policy : kContextPolicies) {
    // Short in the header ("when full: drop middle"); what it keeps and drops on hover.
    const QString name = QString::fromStdString(std::string(context_policy_name(policy)));
    context_policy_->addItem("when full: " + QString(name).replace('-', ' '), name);
    context_policy_->setItemData(context_policy_->count() - 1,
                                 QString::fromStdString(std::string(context_policy_summary(policy))), Qt::ToolTipRole);
  }
  context_policy_->setToolTip("What a turn does when the conversation leaves no room for a reply in the context: stop "
                              "and say so, or leave out old turns (a note above the reply says which). Turns are left "
                              "out whole, and never your new message. On a server, the server keeps its own context.");
  const std::optional<ContextPolicy> stored =
      parse_context_policy(QSettings().value("chat/context_policy", "drop-middle").toString().toStdString());
  set_context_policy(stored.value_or(ContextPolicy::DropMiddle));
  connect(context_policy_, &QComboBox::currentIndexChanged, this,
          [this] { QSettings().setValue("chat/context_policy", context_policy_->currentData().toString()); });

  auto* header = new QHBoxLayout;
  header->addWidget(system_toggle_);
  header->addWidget(token_view_);
  header->addStretch(1);
  header->addWidget(context_);
  header->addWidget(context_policy_);
  auto* buttons = new QVBoxLayout;
  buttons->addWidget(send_);
  buttons->addWidget(stop_);
  buttons->addWidget(regenerate_);
  auto* input_row = new QHBoxLayout;
  input_row->addWidget(input_, 1);
  input_row->addLayout(buttons);
  auto* footer = new QHBoxLayout;
  footer->addWidget(sampling_, 1);
  footer->addWidget(export_, 0, Qt::AlignBottom);

  auto* chat = new QVBoxLayout;
  chat->addLayout(header);
  // On a line of its own: beside the toggle it widened the chat past a laptop screen's share.
  chat->addWidget(token_legend_);
  chat->addWidget(system_);
  chat->addWidget(template_notice_);
  chat->addWidget(view_, 1);
  chat->addWidget(error_);
  chat->addLayout(input_row);
  chat->addLayout(footer);

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(sessions);
  layout->addLayout(chat, 1);

  render_timer_.setSingleShot(true);
  render_timer_.setInterval(50);  // streaming redraws at most 20 times a second, never per token
  connect(&render_timer_, &QTimer::timeout, this, &ChatPanel::refresh_view);
  save_timer_.setSingleShot(true);
  save_timer_.setInterval(500);  // edits of the system prompt and sampling save once typing pauses
  connect(&save_timer_, &QTimer::timeout, this, [this] {
    if (current_ >= 0) save(sessions_[static_cast<size_t>(current_)]);
  });

  connect(new_button_, &QPushButton::clicked, this, [this] { new_session(); });
  connect(delete_button_, &QPushButton::clicked, this, [this] {
    if (current_ < 0 || streaming(current_) || sessions_.size() <= 1) return;
    store_.remove(sessions_[static_cast<size_t>(current_)].id);
    sessions_.erase(sessions_.begin() + current_);
    current_ = -1;
    select_session(0);
  });
  connect(list_, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row >= 0 && row != current_) select_session(row);
  });
  connect(list_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    const int row = list_->row(item);
    if (row < 0 || row >= session_count()) return;
    ChatSession& s = sessions_[static_cast<size_t>(row)];
    const QString name = item->text().trimmed();
    if (name.isEmpty() || name == QString::fromStdString(s.name)) return;
    s.name = name.toStdString();
    save(s);
  });
  connect(system_toggle_, &QToolButton::toggled, this, [this](bool on) {
    system_->setVisible(on);
    system_toggle_->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
  });
  connect(system_, &QPlainTextEdit::textChanged, this, [this] {
    if (current_ < 0) return;
    sessions_[static_cast<size_t>(current_)].system_prompt = system_->toPlainText().toStdString();
    save_timer_.start();
    render_timer_.start();
    refresh_context();
  });
  connect(token_view_, &QCheckBox::toggled, this, [this](bool on) {
    token_legend_->setVisible(on);
    refresh_view();
  });
  connect(sampling_, &SamplingEditor::changed, this, [this] {
    if (current_ < 0) return;
    ChatSession& s = sessions_[static_cast<size_t>(current_)];
    s.sampling = sampling_->params();
    s.max_tokens = sampling_->max_tokens();
    save_timer_.start();
  });
  connect(send_, &QPushButton::clicked, this, &ChatPanel::send);
  connect(stop_, &QPushButton::clicked, this, &ChatPanel::stop);
  connect(regenerate_, &QPushButton::clicked, this, &ChatPanel::regenerate);
  connect(export_, &QPushButton::clicked, this, [this] {
    if (current_ < 0) return;
    const QString path = QFileDialog::getSaveFileName(
        this, "Export session", QString::fromStdString(sessions_[static_cast<size_t>(current_)].name) + ".json",
        "JSON (*.json)");
    QString error;
    if (!path.isEmpty() && !export_session(current_, path, &error)) show_error(sessions_[static_cast<size_t>(current_)].id, error);
  });
  auto* send_shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), input_);
  send_shortcut->setContext(Qt::WidgetShortcut);
  connect(send_shortcut, &QShortcut::activated, this, &ChatPanel::send);

  connect(&bridge_, &EngineBridge::verified, this, &ChatPanel::on_verified);
  connect(&bridge_, &EngineBridge::token, this, &ChatPanel::on_token);
  connect(&bridge_, &EngineBridge::request_failed, this, &ChatPanel::on_request_failed);
  connect(&bridge_, &EngineBridge::usage_reported, this, &ChatPanel::on_usage);
  connect(&bridge_, &EngineBridge::reasoning, this, &ChatPanel::on_reasoning);
  connect(&bridge_, &EngineBridge::finished, this, &ChatPanel::on_finished);
  connect(&bridge_, &EngineBridge::model_loaded, this, &ChatPanel::refresh_context);
  connect(&bridge_, &EngineBridge::remote_connected, this, &ChatPanel::refresh_context);
  connect(&bridge_, &EngineBridge::model_loaded, this, &ChatPanel::refresh_template_notice);
  connect(&bridge_, &EngineBridge::remote_connected, this, &ChatPanel::refresh_template_notice);
  connect(&bridge_, &EngineBridge::config_result, this, &ChatPanel::refresh_context);

  QStringList load_errors;
  sessions_ = store_.load_all(&load_errors);
  if (sessions_.empty()) {
    new_session();
  } else {
    select_session(static_cast<int>(sessions_.size()) - 1);
  }
  if (!load_errors.isEmpty()) show_error(sessions_[static_cast<size_t>(current_)].id, "Sessions not loaded: " + load_errors.join("; "));
}

int ChatPanel::find_session_named(const QString& name) const {
  for (size_t i = 0; i < sessions_.size(); ++i) {
    if (QString::fromStdString(sessions_[i].name) == name) return static_cast<int>(i);
  }
  return -1;
}

int ChatPanel::new_session(const QString& name) {
  ChatSession s;
  s.id = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
  s.created_unix_ms = now_ms();
  s.name = name.isEmpty() ? QString("Session %1").arg(sessions_.size() + 1).toStdString() : name.toStdString();
  if (current_ >= 0) {
    // A new session starts from the sampling settings in use.
    s.sampling = sessions_[static_cast<size_t>(current_)].sampling;
    s.max_tokens = sessions_[static_cast<size_t>(current_)].max_tokens;
  }
  sessions_.push_back(s);
  save(sessions_.back());
  select_session(session_count() - 1);
  return current_;
}

void ChatPanel::select_session(int index) {
  if (index < 0 || index >= session_count()) return;
  if (current_ >= 0 && current_ < session_count()) {
    drafts_[sessions_[static_cast<size_t>(current_)].id] = input_->toPlainText();
    if (save_timer_.isActive()) {
      save_timer_.stop();
      save(sessions_[static_cast<size_t>(current_)]);
    }
  }
  current_ = index;
  to_end_ = true;  // a conversation opens at its latest turn
  const ChatSession& s = sessions_[static_cast<size_t>(index)];
  {
    const QSignalBlocker block(system_);
    system_->setPlainText(QString::fromStdString(s.system_prompt));
  }
  sampling_->set_values(s.sampling, s.max_tokens);
  input_->setPlainText(drafts_[s.id]);
  refresh_list();
  refresh_view();
  emit current_session_changed(index);
}

void ChatPanel::set_system_prompt(const QString& text) {
  system_->setPlainText(text);
  if (current_ >= 0) save(sessions_[static_cast<size_t>(current_)]);
}

void ChatPanel::set_sampling(const SamplingParams& params, int32_t max_tokens) {
  if (current_ < 0) return;
  ChatSession& s = sessions_[static_cast<size_t>(current_)];
  s.sampling = params;
  s.max_tokens = max_tokens;
  sampling_->set_values(params, max_tokens);
  save(s);
}

int ChatPanel::index_of_session(const std::string& id) const {
  for (size_t i = 0; i < sessions_.size(); ++i) {
    if (sessions_[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

ChatSession* ChatPanel::session_by_id(const std::string& id) {
  const int index = index_of_session(id);
  return index < 0 ? nullptr : &sessions_[static_cast<size_t>(index)];
}

bool ChatPanel::streaming(int index) const {
  return index >= 0 && index < session_count() && live_.contains(sessions_[static_cast<size_t>(index)].id);
}

int ChatPanel::streaming_tokens(int index) const {
  if (!streaming(index)) return -1;
  return live_.at(sessions_[static_cast<size_t>(index)].id).tokens;
}

void ChatPanel::send() {
  const QString text = input_->toPlainText();
  if (current_ < 0 || streaming(current_) || text.trimmed().isEmpty()) return;
  ChatSession& s = sessions_[static_cast<size_t>(current_)];
  s.messages.push_back({"user", text.toStdString(), {}, {}, {}, {}});
  input_->clear();
  submit_turn(s, text);
}

void ChatPanel::regenerate() {
  if (current_ < 0 || streaming(current_)) return;
  ChatSession& s = sessions_[static_cast<size_t>(current_)];
  if (!s.messages.empty() && s.messages.back().role == "assistant") s.messages.pop_back();
  if (s.messages.empty()) return;
  submit_turn(s, {});
  // Greedy sampling picks the same tokens again: the reply says so, and what to change.
  if (s.sampling.temperature <= 0 && streaming(current_)) {
    std::string& note = s.messages.back().note;
    note += std::string(note.empty() ? "" : " ") + kGreedyRegenerateNote;
    refresh_view();
  }
}

void ChatPanel::stop() {
  const int request = current_request();
  if (request >= 0) bridge_.cancel(request);
}

void ChatPanel::submit_turn(ChatSession& s, const QString& restore) {
  errors_.erase(s.id);
  EngineRequest r;
  r.messages = s.chat_messages();
  r.sampling = s.sampling;
  r.max_tokens = s.max_tokens;
  if (bridge_.model()) r.stop = bridge_.model()->chat_template().stop_strings();
  Live live;
  std::string note;
  if (bridge_.model() && !bridge_.remote()) {
    // A server keeps its own context; the local engine's is the context length: the policy fits the turn into it.
    const int32_t limit = bridge_.config().context_length;
    const ContextPolicy policy = context_policy();
    const ContextFit fit = fit_context(r.messages, policy, limit, reply_room(s.max_tokens, limit),
                                       [this](const std::vector<ChatMessage>& m) { return bridge_.count_chat_tokens(m); });
    note = context_fit_note(fit, policy, limit);
    if (!fit.fits) {
      if (!restore.isEmpty()) {
        s.messages.pop_back();
        give_back_input(s.id, restore);
      }
      show_error(s.id, QString::fromStdString(note) +
                           (restore.isEmpty() ? QString() : QString(" (your message is back in the input box)")));
      refresh_view();
      return;
    }
    r.messages = fit.messages;
    live.prompt_tokens = fit.prompt_tokens;
  } else {
    live.prompt_tokens = bridge_.count_chat_tokens(r.messages);
  }
  live.restore = restore;
  live.clock.start();
  s.messages.push_back({"assistant", "", {}, {}, {}, note});
  live.request = bridge_.submit(std::move(r));
  request_session_[live.request] = s.id;
  live_[s.id] = live;
  refresh_list();
  to_end_ = true;  // the new turn and its reply are what the user looks at now
  refresh_view();
}

void ChatPanel::on_verified(int request, const Verification& verification, const QString& refused_piece) {
  auto it = request_session_.find(request);
  if (it != request_session_.end()) live_[it->second].trace.verified(verification, refused_piece.toStdString());
}

void ChatPanel::on_token(int request, const QString& piece, int token_id, double since_arrival_s, double time_s) {
  auto it = request_session_.find(request);
  if (it == request_session_.end()) return;
  ChatSession* s = session_by_id(it->second);
  Live& live = live_[it->second];
  if (!s) return;
  if (token_id >= 0 || token_id == kRemoteChunk) {
    if (live.tokens == 0) {
      live.ttft_s = since_arrival_s;
      live.first_token_s = time_s;
    }
    live.last_token_s = time_s;
    ++live.tokens;
  }
  const std::string text = piece.toStdString();
  s->messages.back().content += text;
  live.trace.token(s->messages.back().tokens, text, token_id);
  if (current_ >= 0 && sessions_[static_cast<size_t>(current_)].id == s->id && !render_timer_.isActive()) {
    render_timer_.start();
  }
}

void ChatPanel::on_reasoning(int request, const QString& piece) {
  auto it = request_session_.find(request);
  if (it == request_session_.end()) return;
  ChatSession* s = session_by_id(it->second);
  if (!s) return;
  s->messages.back().reasoning += piece.toStdString();
  if (current_ >= 0 && sessions_[static_cast<size_t>(current_)].id == s->id && !render_timer_.isActive()) render_timer_.start();
}

void ChatPanel::on_usage(int request, int prompt_tokens, int generation_tokens) {
  auto it = request_session_.find(request);
  if (it == request_session_.end()) return;
  // The server's counts replace the chunks counted as they streamed.
  Live& live = live_[it->second];
  live.prompt_tokens = prompt_tokens;
  live.tokens = generation_tokens;
}

void ChatPanel::on_request_failed(int request, const QString& message) {
  auto it = request_session_.find(request);
  if (it != request_session_.end()) live_[it->second].error = message;
}

void ChatPanel::on_finished(int request, const QString& reason) {
  auto it = request_session_.find(request);
  if (it == request_session_.end()) return;
  const std::string id = it->second;
  request_session_.erase(it);
  const Live live = live_[id];
  live_.erase(id);
  ChatSession* s = session_by_id(id);
  if (!s) return;
  ReplyStats stats;
  stats.time_unix_ms = now_ms();
  stats.prompt_tokens = live.prompt_tokens;
  stats.tokens = live.tokens;
  stats.ttft_s = live.ttft_s;
  const double decode_s = live.last_token_s - live.first_token_s;
  stats.tokens_per_second = live.tokens > 1 && decode_s > 0 ? (live.tokens - 1) / decode_s : 0;
  stats.seconds = static_cast<double>(live.clock.elapsed()) / 1000.0;
  stats.finish_reason = reason.toStdString();
  stats.engine = config_summary(bridge_.config());
  s->timeline.push_back(stats);
  if (reason == "error") {
    // The turn never happened: drop it and give the user's text back.
    s->messages.pop_back();
    if (!live.restore.isEmpty()) {
      s->messages.pop_back();
      give_back_input(id, live.restore);
    }
    show_error(id, "Request failed: " + (live.error.isEmpty() ? QString("no reason given") : live.error) +
                       (live.restore.isEmpty() ? QString() : QString(" (your message is back in the input box)")));
  } else {
    s->messages.back().stats = stats;
  }
  save(*s);
  refresh_list();
  refresh_view();
}

void ChatPanel::save(const ChatSession& s) {
  QString error;
  if (!store_.save(s, &error)) show_error(s.id, "Autosave failed: " + error);
}

void ChatPanel::give_back_input(const std::string& id, const QString& text) {
  const bool shown = current_ >= 0 && sessions_[static_cast<size_t>(current_)].id == id;
  QString& draft = drafts_[id];
  const QString existing = shown ? input_->toPlainText() : draft;
  const QString restored = existing.isEmpty() ? text : text + "\n" + existing;
  if (shown) {
    input_->setPlainText(restored);
  } else {
    draft = restored;
  }
}

void ChatPanel::show_error(const std::string& session_id, const QString& message) {
  errors_[session_id] = message;
  refresh_controls();
}

void ChatPanel::refresh_list() {
  const QSignalBlocker block(list_);
  list_->clear();
  for (size_t i = 0; i < sessions_.size(); ++i) {
    const bool live = streaming(static_cast<int>(i));
    auto* item = new QListWidgetItem((live ? "● " : "") + QString::fromStdString(sessions_[i].name));
    item->setData(Qt::UserRole, QString::fromStdString(sessions_[i].id));
    item->setFlags(item->flags() | (live ? Qt::NoItemFlags : Qt::ItemIsEditable));
    item->setToolTip(live ? "Streaming a reply" : "Double-click to rename");
    list_->addItem(item);
  }
  list_->setCurrentRow(current_);
  refresh_controls();
}

void ChatPanel::refresh_view() {
  if (current_ < 0) return;
  QScrollBar* bar = view_->verticalScrollBar();
  const bool at_end = std::exchange(to_end_, false) || bar->value() >= bar->maximum() - 4;
  const int at = bar->value();
  view_->setHtml(conversation_html(sessions_[static_cast<size_t>(current_)], streaming(current_), token_view_->isChecked()));
  // New HTML starts at the top: the view stays at the end while it was there (or goes there for a new
  // turn or another session), else where the user scrolled it.
  bar->setValue(at_end ? bar->maximum() : at);
  refresh_context();
  refresh_controls();
}

void ChatPanel::refresh_controls() {
  if (current_ < 0) return;
  const ChatSession& s = sessions_[static_cast<size_t>(current_)];
  const bool live = streaming(current_);
  // A button that is about to be disabled under the keyboard focus hands it to the message box
  // (else Qt moves it along the tab chain, to the sampling fields).
  QPushButton* focused = qobject_cast<QPushButton*>(QApplication::focusWidget());
  send_->setEnabled(!live);
  stop_->setEnabled(live);
  regenerate_->setEnabled(!live && !s.messages.empty());
  delete_button_->setEnabled(!live && sessions_.size() > 1);
  if (focused != nullptr && !focused->isEnabled() && isAncestorOf(focused)) input_->setFocus();
  auto it = errors_.find(s.id);
  error_->setVisible(it != errors_.end());
  error_->setText(it != errors_.end() ? it->second : QString());
}

void ChatPanel::refresh_context() {
  if (current_ < 0) return;
  // A server keeps its own context: the policy applies to the local engine's.
  context_policy_->setEnabled(!bridge_.remote());
  if (bridge_.remote()) {
    // The server renders the template and owns the context: its usage is in each reply's stats.
    context_->setText("context: the server's");
    context_->setToolTip("A remote server applies its chat template and context length; each reply shows the tokens it counted");
    return;
  }
  const ChatSession& s = sessions_[static_cast<size_t>(current_)];
  auto it = live_.find(s.id);
  const int used = it != live_.end() ? it->second.prompt_tokens + it->second.tokens
                                     : bridge_.count_chat_tokens(s.chat_messages());
  const int max = bridge_.model() ? bridge_.config().context_length : 0;
  context_->setText(QString("context %1 / %2").arg(used).arg(max));
  context_->setToolTip("Tokens of this conversation (rendered with the chat template) / the context length the engine allows");
}

void ChatPanel::set_token_view(bool on) { token_view_->setChecked(on); }
bool ChatPanel::token_view() const { return token_view_->isChecked(); }
QString ChatPanel::token_legend_text() const { return token_legend_->isHidden() ? QString() : token_legend_->text(); }

QString ChatPanel::input_text() const { return input_->toPlainText(); }
void ChatPanel::set_input_text(const QString& text) { input_->setPlainText(text); }
// Shown by the panel, whether or not the panel itself is on screen (the welcome page may cover it).
QString ChatPanel::error_text() const { return error_->isVisibleTo(this) ? error_->text() : QString(); }
QString ChatPanel::transcript() const { return view_->toPlainText(); }
QString ChatPanel::context_text() const { return context_->text(); }

QString ChatPanel::template_notice_text() const { return template_notice_->isHidden() ? QString() : template_notice_->text(); }

void ChatPanel::refresh_template_notice() {
  // A server applies its own template; a local model's guessed one is said above the conversation.
  const bool local = bridge_.model() && !bridge_.remote();
  show_template_notice(*template_notice_, local ? bridge_.model()->chat_template_notice() : std::string());
}

void ChatPanel::set_context_policy(ContextPolicy policy) {
  context_policy_->setCurrentIndex(context_policy_->findData(QString::fromStdString(std::string(context_policy_name(policy)))));
}

ContextPolicy ChatPanel::context_policy() const {
  return parse_context_policy(context_policy_->currentData().toString().toStdString()).value_or(ContextPolicy::DropMiddle);
}

int ChatPanel::session_of_request(int request) const {
  auto it = request_session_.find(request);
  return it == request_session_.end() ? -1 : index_of_session(it->second);
}

int ChatPanel::current_request() const {
  if (current_ < 0) return -1;
  auto it = live_.find(sessions_[static_cast<size_t>(current_)].id);
  return it == live_.end() ? -1 : it->second.request;
}

int ChatPanel::import_session(const QString& path, QString* error) {
  ChatSession s;
  try {
    s = read_session_file(path);
  } catch (const std::exception& e) {
    *error = QString("Cannot import the session: ") + e.what();
    return -1;
  }
  // Its own id, so an import never overwrites the session it was exported from.
  s.id = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
  s.created_unix_ms = now_ms();
  sessions_.push_back(std::move(s));
  save(sessions_.back());
  select_session(session_count() - 1);
  return current_;
}

void ChatPanel::import_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, "Import a chat session", {}, "Sessions (*.json);;All files (*)");
  if (path.isEmpty()) return;
  QString error;
  if (import_session(path, &error) < 0 && current_ >= 0) show_error(sessions_[static_cast<size_t>(current_)].id, error);
}

bool ChatPanel::export_session(int index, const QString& path, QString* error) const {
  nlohmann::json j = session_to_json(session(index));
  j["model"] = bridge_.model_path().toStdString();
  j["engine_config"] = config_overrides_of(bridge_.config());
  return write_json_file(path, j, error);
}

}  // namespace inferscope::gui
