// The chat: a list of sessions (each its own conversation, system prompt and sampling parameters)
// and the current one's streaming conversation, input, stop / regenerate, context counter and
// tokens/s under each reply, shown as Markdown or, switched on, token by token (how speculative
// decoding produced each one). Every turn is one request into the shared engine, so sessions that
// send at once are batched together. Sessions autosave; nothing typed is lost: a failed turn puts
// its text back into the input box with the error shown above it.
#pragma once
#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>
#include <map>
#include <vector>

#include "core/engine/context_fit.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/session_store.h"
#include "gui/chat/token_trace.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QPlainTextEdit;
class QPushButton;
class QTextBrowser;
class QToolButton;

namespace inferscope::gui {

class EngineBridge;
class SamplingEditor;

class ChatPanel : public QWidget {
  Q_OBJECT
 public:
  ChatPanel(EngineBridge& bridge, SessionStore store, QWidget* parent = nullptr);

  int session_count() const { return static_cast<int>(sessions_.size()); }
  int current_index() const { return current_; }
  const ChatSession& session(int index) const { return sessions_.at(static_cast<size_t>(index)); }
  // The first session called `name` (-1: none). Names repeat, so only scripts that name their own
  // sessions look them up this way; everything else keys sessions by their id.
  int find_session_named(const QString& name) const;
  int new_session(const QString& name = {});    // creates, selects and saves it
  void select_session(int index);
  void set_system_prompt(const QString& text);  // of the current session
  void set_sampling(const SamplingParams& params, int32_t max_tokens);  // of the current session

  void send();  // the input box's text, into the current session
  void stop();
  void regenerate();
  bool streaming(int index) const;
  int requests_in_flight() const { return static_cast<int>(live_.size()); }
  // Tokens the streaming reply of session `index` has so far (-1 when none streams).
  int streaming_tokens(int index) const;

  // The per-token view: each reply's tokens coloured by origin, with p(x) and q(x) on hover.
  void set_token_view(bool on);
  bool token_view() const;
  QString token_legend_text() const;  // the colours' key while the per-token view is on, else ""

  QString input_text() const;
  void set_input_text(const QString& text);
  // The error line under the conversation ("" when none is shown).
  QString error_text() const;
  QString transcript() const;    // the chat view's plain text
  QString context_text() const;  // "context 312 / 2048"
  // The notice above the conversation when the local model's chat template was guessed ("" when none shows).
  QString template_notice_text() const;
  // What a turn does when the conversation leaves no room for a reply in the context (kept in
  // QSettings "chat/context_policy"; default drop-middle); a note above the reply says when it acted.
  void set_context_policy(ContextPolicy policy);
  ContextPolicy context_policy() const;
  // The index of the session a bridge request belongs to (-1 when none), and the current session's request (-1).
  int session_of_request(int request) const;
  int current_request() const;
  // Messages, sampling, engine configuration and reply timeline as JSON.
  bool export_session(int index, const QString& path, QString* error) const;
  // A saved or exported session file as a new session (its own id, created now), selected and saved;
  // -1 with `error` naming the file and field when it cannot be read.
  int import_session(const QString& path, QString* error);
  // Asks for a session file and imports it, saying why in the error line when it cannot.
  void import_dialog();

 signals:
  void current_session_changed(int index);

 private:
  struct Live {
    int request = -1;
    QElapsedTimer clock;        // since submit
    double first_token_s = -1;  // engine clock of the first and last token
    double last_token_s = -1;
    double ttft_s = -1;
    int32_t tokens = 0, prompt_tokens = 0;
    QString restore;            // the user's text to give back if the turn fails
    QString error;
    TraceBuilder trace;         // pairs the engine's verifications with the tokens that follow
  };
  int index_of_session(const std::string& id) const;  // -1 when none has that id
  ChatSession* session_by_id(const std::string& id);
  void submit_turn(ChatSession& s, const QString& restore);
  void on_verified(int request, const Verification& verification, const QString& refused_piece);
  void on_token(int request, const QString& piece, int token_id, double since_arrival_s, double time_s);
  void on_request_failed(int request, const QString& message);
  void on_usage(int request, int prompt_tokens, int generation_tokens);
  void on_reasoning(int request, const QString& piece);
  void on_finished(int request, const QString& reason);
  void save(const ChatSession& s);
  void refresh_list();
  void refresh_view();
  void refresh_controls();
  void refresh_context();
  void refresh_template_notice();
  void show_error(const std::string& session_id, const QString& message);
  // Puts `text` back in session `id`'s input box (before what is typed there now).
  void give_back_input(const std::string& id, const QString& text);

  EngineBridge& bridge_;
  SessionStore store_;
  std::vector<ChatSession> sessions_;
  int current_ = -1;
  std::map<std::string, Live> live_;         // session id -> its reply in flight
  std::map<int, std::string> request_session_;
  std::map<std::string, QString> drafts_;    // unsent input of the sessions not shown
  std::map<std::string, QString> errors_;    // the last error of each session

  QListWidget* list_;
  QPushButton *new_button_, *delete_button_;
  QToolButton* system_toggle_;
  QCheckBox* token_view_;
  QLabel* token_legend_;  // the per-token view's colours, shown while it is on
  QPlainTextEdit* system_;
  QTextBrowser* view_;
  bool to_end_ = false;  // the next refresh_view() shows the conversation's end
  QLabel *error_, *context_;
  QComboBox* context_policy_;
  QLabel* template_notice_;  // the loaded model's guessed chat template, said above the conversation
  SamplingEditor* sampling_;
  QPlainTextEdit* input_;
  QPushButton *send_, *stop_, *regenerate_, *export_;
  QTimer render_timer_, save_timer_;
};

}  // namespace inferscope::gui
