#pragma once
// The Scaling panel's model: saved curves (curve_store) fitted and classed again on reading, as
// `gpupart plan` does (a file's own fit is never trusted: curve_json.hpp), in the order the panel lists
// them, and the words and chart series that describe one. No widgets: the panel and its tests share it.
#include <optional>
#include <string>
#include <vector>

#include <QString>

#include "planner/classification.hpp"
#include "planner/curve_json.hpp"

QT_BEGIN_NAMESPACE
class QLineSeries;
class QScatterSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace gpupart::widgets {

struct CurveEntry {
    StoredCurve curve;
    std::optional<CurveFit> fit;                 // empty: the points gave no curve (no_fit says why)
    std::optional<Classification> classification;
    QString no_fit;
    bool this_gpu = false;                       // measured on the GPU the window shows
};

// Fits and classes each curve; this GPU's first (a curve from another GPU says little here), then the
// newest measurement first (ISO 8601 times sort as text), then by command line.
std::vector<CurveEntry> curve_entries(std::vector<StoredCurve> curves, const std::string& gpu_uuid);

// The entry of a process (command line and user, as `gpupart measure` saves them) on this GPU, if any.
const CurveEntry* find_curve(const std::vector<CurveEntry>& entries, const std::string& command, const std::string& user,
                             const std::string& gpu_uuid);

// "compute" / "memory" / "no fit".
QString class_word(const CurveEntry& entry);
// One list line: command, user, class, when.
QString curve_label(const CurveEntry& entry);
// The text under the chart (rich text, every outside string escaped): a and b, R^2, the class and why,
// what the rate counts, when and on which GPU it was measured.
QString curve_summary(const CurveEntry& entry);

// Fills `points` with the measured (TPCs, rate) and `fit` with the fitted rate 1/(a/m + b) for every
// whole m from the fewest measured TPCs (at least 1) to the GPU's, and sets the axes' ranges.
void fill_curve_series(const CurveEntry& entry, QScatterSeries& points, QLineSeries& fit, QValueAxis& tpcs, QValueAxis& rate);

}  // namespace gpupart::widgets
