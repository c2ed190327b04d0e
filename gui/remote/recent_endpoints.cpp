#include "gui/remote/recent_endpoints.h"

#include <QSettings>

namespace inferscope::gui {
namespace {

// A QSettings array: readable text in the settings file ("recent_endpoints\1\url=http://...").
const QString kKey = QStringLiteral("recent_endpoints");
const QString kUrl = QStringLiteral("url"), kModel = QStringLiteral("model");

}  // namespace

QList<RecentEndpoint> recent_endpoints() {
  QSettings settings;
  QList<RecentEndpoint> out;
  const int n = settings.beginReadArray(kKey);
  for (int i = 0; i < n; ++i) {
    settings.setArrayIndex(i);
    const RecentEndpoint r{settings.value(kUrl).toString(), settings.value(kModel).toString()};
    if (!r.url.isEmpty()) out.push_back(r);
  }
  settings.endArray();
  return out;
}

void remember_endpoint(const RemoteEndpoint& endpoint) {
  QList<RecentEndpoint> list{{QString::fromStdString(endpoint.base_url), QString::fromStdString(endpoint.model)}};
  for (const RecentEndpoint& r : recent_endpoints())
    if (r != list.front() && list.size() < kMaxRecentEndpoints) list.push_back(r);
  QSettings settings;
  settings.remove(kKey);  // a shorter list leaves no stale entries behind
  settings.beginWriteArray(kKey, static_cast<int>(list.size()));
  for (int i = 0; i < list.size(); ++i) {
    settings.setArrayIndex(i);
    settings.setValue(kUrl, list[i].url);
    settings.setValue(kModel, list[i].model);
  }
  settings.endArray();
}

}  // namespace inferscope::gui
