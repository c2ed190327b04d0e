// Where chat sessions live on disk: one JSON file per session in a folder (by default
// AppDataLocation/sessions; INFERSCOPE_SESSIONS_DIR or --sessions-dir overrides it). Every write is
// atomic (QSaveFile: a temp file renamed over the old one), so a crash never leaves half a session.
#pragma once
#include <QString>
#include <QStringList>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gui/chat/chat_session.h"

namespace inferscope::gui {

class SessionStore {
 public:
  explicit SessionStore(QString dir);
  // INFERSCOPE_SESSIONS_DIR when set, else QStandardPaths::AppDataLocation + "/sessions".
  static QString default_dir();
  const QString& dir() const { return dir_; }

  // Every readable session, oldest first; files that cannot be read are named in `errors`.
  std::vector<ChatSession> load_all(QStringList* errors) const;
  bool save(const ChatSession& session, QString* error) const;
  void remove(const std::string& id) const;

 private:
  QString path_of(const std::string& id) const;
  QString dir_;
};

// The session in the file at `path` (a saved or exported session); throws std::runtime_error naming the
// file and the field when it cannot be read or is malformed.
ChatSession read_session_file(const QString& path);

// Writes `j` (indented) to `path` atomically; false with `error` set on failure.
bool write_json_file(const QString& path, const nlohmann::json& j, QString* error);

}  // namespace inferscope::gui
