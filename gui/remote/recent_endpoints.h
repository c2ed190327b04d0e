// The servers connected to lately, newest first, in QSettings under "recent_endpoints": each its URL
// and model only. The API key is never stored.
#pragma once
#include <QList>
#include <QString>

#include "core/remote/remote_endpoint.h"

namespace inferscope::gui {

struct RecentEndpoint {
  QString url;
  QString model;  // "" when the server's first model was used
  bool operator==(const RecentEndpoint&) const = default;
};

inline constexpr int kMaxRecentEndpoints = 8;

QList<RecentEndpoint> recent_endpoints();
// Puts `endpoint`'s URL and model first (once), keeping the newest kMaxRecentEndpoints.
void remember_endpoint(const RemoteEndpoint& endpoint);

}  // namespace inferscope::gui
