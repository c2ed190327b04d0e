#include "gui/chat/session_store.h"

#include <QDir>
#include <QFile>
#include <QSaveFile>
#include <QStandardPaths>
#include <algorithm>
#include <nlohmann/json.hpp>

namespace inferscope::gui {

SessionStore::SessionStore(QString dir) : dir_(std::move(dir)) {}

QString SessionStore::default_dir() {
  const QString env = qEnvironmentVariable("INFERSCOPE_SESSIONS_DIR");
  if (!env.isEmpty()) return env;
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/sessions";
}

QString SessionStore::path_of(const std::string& id) const {
  return dir_ + "/" + QString::fromStdString(id) + ".json";
}

std::vector<ChatSession> SessionStore::load_all(QStringList* errors) const {
  std::vector<ChatSession> sessions;
  const QDir dir(dir_);
  for (const QString& name : dir.entryList({"*.json"}, QDir::Files, QDir::Name)) {
    try {
      sessions.push_back(read_session_file(dir.filePath(name)));
    } catch (const std::exception& e) {
      errors->append(QString::fromStdString(e.what()));
    }
  }
  std::stable_sort(sessions.begin(), sessions.end(),
                   [](const ChatSession& a, const ChatSession& b) { return a.created_unix_ms < b.created_unix_ms; });
  return sessions;
}

bool SessionStore::save(const ChatSession& session, QString* error) const {
  if (!QDir().mkpath(dir_)) {
    *error = dir_ + ": cannot create the sessions folder";
    return false;
  }
  return write_json_file(path_of(session.id), session_to_json(session), error);
}

void SessionStore::remove(const std::string& id) const { QFile::remove(path_of(id)); }

ChatSession read_session_file(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error((path + ": " + file.errorString()).toStdString());
  const QByteArray bytes = file.readAll();
  return session_from_text(std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())), path.toStdString());
}

bool write_json_file(const QString& path, const nlohmann::json& j, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    *error = path + ": " + file.errorString();
    return false;
  }
  const std::string text = j.dump(2) + "\n";
  file.write(text.data(), static_cast<qint64>(text.size()));
  if (!file.commit()) {
    *error = path + ": " + file.errorString();
    return false;
  }
  return true;
}

}  // namespace inferscope::gui
