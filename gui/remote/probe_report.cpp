#include "gui/remote/probe_report.h"

#include <QObject>
#include <QStringList>

#include "core/remote/http_client.h"

namespace inferscope::gui {
namespace {

// The first line says what happened; the client's message (URL, curl's words, the server's answer) follows.
QString http_failure_text(const HttpError& e, double timeout_s) {
  QString what;
  switch (e.failure()) {
    case HttpFailure::Connect:
      what = QObject::tr("Cannot connect: nothing is listening there (is the server running?) or the host is unknown.");
      break;
    case HttpFailure::Timeout:
      what = QObject::tr("The server did not answer within %1 s.").arg(timeout_s, 0, 'g', 3);
      break;
    case HttpFailure::Tls:
      what = QObject::tr("TLS failed: the certificate or the handshake was refused.");
      break;
    case HttpFailure::Status:
      what = e.status() == 401 || e.status() == 403
                 ? QObject::tr("The server refused the request (HTTP %1): check the API key.").arg(e.status())
                 : QObject::tr("The server answered with an error (HTTP %1).").arg(e.status());
      break;
    default:
      what = QObject::tr("The connection failed.");
  }
  return what + QLatin1Char('\n') + QString::fromStdString(e.what());
}

}  // namespace

ProbeReport probe_report(const RemoteEndpoint& endpoint, double timeout_s, const std::atomic<bool>* cancel) {
  ProbeReport report{endpoint, std::nullopt, {}};
  try {
    report.info = probe_server(endpoint, timeout_s, cancel);
  } catch (const HttpError& e) {
    report.error = http_failure_text(e, timeout_s);
  } catch (const std::exception& e) {  // read_models_list: the answer is not an OpenAI models list
    report.error = QObject::tr("This is not an OpenAI-compatible server.\n") + QString::fromStdString(e.what());
  }
  return report;
}

QString server_summary(const ServerInfo& info) {
  QStringList parts;
  parts << (info.kind == ServerKind::Unknown ? QObject::tr("OpenAI-compatible server of unknown kind")
                                             : QString::fromUtf8(server_kind_name(info.kind)));
  if (info.slot_count) parts << QObject::tr("%1 slots").arg(*info.slot_count);
  if (info.context_length) parts << QObject::tr("context %1").arg(*info.context_length);
  if (info.models.size() == 1) parts << QObject::tr("model %1").arg(QString::fromStdString(info.models.front()));
  else parts << QObject::tr("%1 models").arg(info.models.size());
  if (!info.build.empty()) parts << QObject::tr("build %1").arg(QString::fromStdString(info.build));
  return parts.join(QStringLiteral(" · "));
}

QString metrics_summary(const ServerInfo& info) {
  if (info.metrics_release.empty()) return {};
  QString text = QObject::tr("Its /metrics names fit %1.").arg(QString::fromStdString(info.metrics_release));
  if (!info.metrics_unpublished.empty())
    text += QObject::tr(" Not published: %1.").arg(QString::fromStdString(info.metrics_unpublished));
  return text;
}

}  // namespace inferscope::gui
