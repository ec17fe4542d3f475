#include "fact_qtext.hpp"

namespace gpupart::widgets {

QString provenance_text(const Provenance& from) {
    const QString source = QString::fromUtf8(to_string(from.source).data(), static_cast<qsizetype>(to_string(from.source).size()));
    return from.detail.empty() ? source : source + QStringLiteral(": ") + QString::fromStdString(from.detail);
}

}  // namespace gpupart::widgets
