#include "tpc_drag.hpp"

namespace gpupart::widgets {

QMimeData* make_tpc_mime(const TpcMask& tpcs) {
    auto* mime = new QMimeData;
    mime->setData(kTpcMimeType, QByteArray::fromStdString(tpcs.to_hex()));
    mime->setText(QString::fromStdString(tpcs.to_list()));  // dropping into a terminal or editor gives "0-3,9"
    return mime;
}

std::optional<TpcMask> tpcs_from_mime(const QMimeData* mime) {
    if (mime == nullptr || !mime->hasFormat(kTpcMimeType)) return std::nullopt;
    const auto mask = TpcMask::parse_hex(mime->data(kTpcMimeType).toStdString());
    if (!mask || mask->empty()) return std::nullopt;
    return mask;
}

}  // namespace gpupart::widgets
