#include "scaling_curves.hpp"

#include <algorithm>
#include <cmath>

#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include "chart_ticks.hpp"
#include "display_text.hpp"
#include "model/user_error.hpp"

namespace gpupart::widgets {
namespace {

QString html(std::string_view text) { return plain_text(text).toHtmlEscaped(); }

// a in seconds x TPC and b in seconds, shown in the unit that keeps 3-4 significant digits readable.
QString seconds_text(double seconds) {
    const double magnitude = std::abs(seconds);
    if (magnitude != 0 && magnitude < 1e-3) return QString("%1 µs").arg(seconds * 1e6, 0, 'g', 4);
    if (magnitude < 1) return QString("%1 ms").arg(seconds * 1e3, 0, 'g', 4);
    return QString("%1 s").arg(seconds, 0, 'g', 4);
}

// `round_top`: the axis ends at a tick (rates); else exactly at `top` (the GPU's TPCs end the TPC axis).
void set_nice_range(QValueAxis& axis, double top, int intervals, bool round_top) {
    const double step = nice_step(top, intervals);
    axis.setTickType(QValueAxis::TicksDynamic);
    axis.setTickAnchor(0);
    axis.setTickInterval(step);
    axis.setRange(0, round_top ? std::ceil(top / step) * step : top);
}

}  // namespace

std::vector<CurveEntry> curve_entries(std::vector<StoredCurve> curves, const std::string& gpu_uuid) {
    std::vector<CurveEntry> entries;
    entries.reserve(curves.size());
    for (StoredCurve& curve : curves) {
        CurveEntry entry;
        entry.this_gpu = curve.identity.gpu == gpu_uuid;
        try {
            entry.fit = fit_curve(curve.points);
            entry.classification = classify_measured(curve.points, *entry.fit, curve.total_tpcs, curve.memory_throughput);
        } catch (const UserError& error) {  // a flat or too short curve: listed, with why it has no fit
            entry.fit.reset();
            entry.no_fit = plain_text(error.what());
        }
        entry.curve = std::move(curve);
        entries.push_back(std::move(entry));
    }
    std::stable_sort(entries.begin(), entries.end(), [](const CurveEntry& x, const CurveEntry& y) {
        if (x.this_gpu != y.this_gpu) return x.this_gpu;
        if (x.curve.measured != y.curve.measured) return x.curve.measured > y.curve.measured;
        return x.curve.identity.command < y.curve.identity.command;
    });
    return entries;
}

const CurveEntry* find_curve(const std::vector<CurveEntry>& entries, const std::string& command, const std::string& user,
                             const std::string& gpu_uuid) {
    const CurveIdentity wanted{command, user, gpu_uuid};
    for (const CurveEntry& entry : entries)
        if (entry.curve.identity == wanted) return &entry;
    return nullptr;
}

QString class_word(const CurveEntry& entry) {
    if (!entry.classification) return "no fit";
    return QString::fromUtf8(to_string(entry.classification->intensity));
}

QString curve_label(const CurveEntry& entry) {
    QString label = QString("%1 · %2 · %3 · %4")
                        .arg(plain_text(entry.curve.identity.command).left(60), plain_text(entry.curve.identity.user),
                             class_word(entry), plain_text(entry.curve.measured));
    if (!entry.this_gpu) label += " · other GPU";
    return label;
}

QString curve_summary(const CurveEntry& entry) {
    const StoredCurve& curve = entry.curve;
    QStringList lines;
    lines << QString("<b>%1</b> (user %2)").arg(html(curve.identity.command), html(curve.identity.user));
    if (entry.fit) {
        const CurveFit& fit = *entry.fit;
        lines << QString("Fit C(m) = a/m + b: a = %1 × TPC, b = %2 · R² %3 · typical error %4% · %5 points, %6–%7 TPCs%8")
                     .arg(seconds_text(fit.model.a), seconds_text(fit.model.b))
                     .arg(fit.r_squared, 0, 'f', 3)
                     .arg(fit.rms_relative_residual * 100, 0, 'f', 1)
                     .arg(fit.points)
                     .arg(fit.fewest_tpcs)
                     .arg(fit.most_tpcs)
                     .arg(fit.b_clamped ? " (b clamped to 0)" : "");
        lines << QString("<b>Class</b>: %1").arg(html(entry.classification->reason));  // the reason names the class
    } else {
        lines << QString("<b>No fit</b>: %1").arg(entry.no_fit.toHtmlEscaped());
    }
    lines << QString("Rate = %1").arg(html(curve.rate_meaning.empty() ? "(not recorded)" : curve.rate_meaning));
    lines << QString("Measured %1 on %2 (%3 TPCs)%4")
                 .arg(html(curve.measured), html(curve.identity.gpu))
                 .arg(curve.total_tpcs)
                 .arg(entry.this_gpu ? "" : " — another GPU than the one shown");
    return lines.join("<br>");
}

void fill_curve_series(const CurveEntry& entry, QScatterSeries& points, QLineSeries& fit, QValueAxis& tpcs, QValueAxis& rate) {
    QList<QPointF> measured;
    double top = 0;
    int fewest = entry.curve.total_tpcs;
    for (const CurvePoint& p : entry.curve.points) {
        measured.append(QPointF(p.tpcs, p.rate));
        top = std::max(top, p.rate);
        fewest = std::min(fewest, p.tpcs);
    }
    points.replace(measured);  // one geometry update per series, not one per point
    QList<QPointF> line;
    if (entry.fit)
        for (int m = std::max(1, fewest); m <= entry.curve.total_tpcs; ++m) {
            line.append(QPointF(m, entry.fit->model.rate(m)));
            top = std::max(top, line.back().y());
        }
    fit.replace(line);
    set_nice_range(tpcs, std::max(1, entry.curve.total_tpcs), 6, false);
    set_nice_range(rate, top > 0 ? top * 1.05 : 1, 5, true);
}

}  // namespace gpupart::widgets
