// Owner colours and letters at the scale of a real node: 40 processes get colours no two of which are
// closer than a person can tell apart (CIEDE2000, computed here and checked against the published test
// data of Sharma, Wu and Dalal, "The CIEDE2000 color-difference formula: implementation notes"), none
// near the unowned and hole greys; each process keeps its letter and colour for its life, the same set
// gets the same ones in another run, and the legend of 33 owners stays a few rows of letter chips.
#include <array>
#include <cmath>
#include <set>

#include <QImage>
#include <QPainter>
#include <QtTest>

#include "floorplan_geometry.hpp"
#include "floorplan_painter.hpp"
#include "floorplan_scene.hpp"
#include "owner_colors.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;

namespace {

struct Lab {
    double l, a, b;
};

Lab lab_of(const QColor& color) {  // sRGB (D65) to CIELAB
    auto linear = [](double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
    const double r = linear(color.redF()), g = linear(color.greenF()), b = linear(color.blueF());
    const double x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
    const double y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
    const double z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883;
    auto f = [](double t) { return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116; };
    return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

double radians(double degrees) { return degrees * M_PI / 180; }

double ciede2000(const Lab& x, const Lab& y) {
    const double c1 = std::hypot(x.a, x.b), c2 = std::hypot(y.a, y.b), c_mean = (c1 + c2) / 2;
    const double g = 0.5 * (1 - std::sqrt(std::pow(c_mean, 7) / (std::pow(c_mean, 7) + std::pow(25.0, 7))));
    const double a1 = (1 + g) * x.a, a2 = (1 + g) * y.a;
    const double c1p = std::hypot(a1, x.b), c2p = std::hypot(a2, y.b);
    auto hue = [](double b, double a) {
        if (a == 0 && b == 0) return 0.0;
        const double h = std::atan2(b, a) * 180 / M_PI;
        return h < 0 ? h + 360 : h;
    };
    const double h1 = hue(x.b, a1), h2 = hue(y.b, a2);
    double dh = 0;
    if (c1p * c2p != 0) {
        dh = h2 - h1;
        if (dh > 180) dh -= 360;
        else if (dh < -180) dh += 360;
    }
    const double dl = y.l - x.l, dc = c2p - c1p, dhh = 2 * std::sqrt(c1p * c2p) * std::sin(radians(dh / 2));
    const double l_mean = (x.l + y.l) / 2, cp_mean = (c1p + c2p) / 2;
    double h_mean = h1 + h2;
    if (c1p * c2p != 0) h_mean = std::abs(h1 - h2) <= 180 ? (h1 + h2) / 2 : (h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2);
    const double t = 1 - 0.17 * std::cos(radians(h_mean - 30)) + 0.24 * std::cos(radians(2 * h_mean)) +
                     0.32 * std::cos(radians(3 * h_mean + 6)) - 0.20 * std::cos(radians(4 * h_mean - 63));
    const double d_theta = 30 * std::exp(-std::pow((h_mean - 275) / 25, 2));
    const double rc = 2 * std::sqrt(std::pow(cp_mean, 7) / (std::pow(cp_mean, 7) + std::pow(25.0, 7)));
    const double sl = 1 + 0.015 * std::pow(l_mean - 50, 2) / std::sqrt(20 + std::pow(l_mean - 50, 2));
    const double sc = 1 + 0.045 * cp_mean, sh = 1 + 0.015 * cp_mean * t;
    const double rt = -std::sin(radians(2 * d_theta)) * rc;
    return std::sqrt(std::pow(dl / sl, 2) + std::pow(dc / sc, 2) + std::pow(dhh / sh, 2) + rt * (dc / sc) * (dhh / sh));
}

double distance(const QColor& x, const QColor& y) { return ciede2000(lab_of(x), lab_of(y)); }

std::set<std::pair<int, std::uint64_t>> processes(int count, int first_pid = 4000) {
    std::set<std::pair<int, std::uint64_t>> live;
    for (int i = 0; i < count; ++i) live.insert({first_pid + 7 * i, 100 + static_cast<std::uint64_t>(i)});
    return live;
}

}  // namespace

class OwnerPaletteTest : public QObject {
    Q_OBJECT
private slots:
    void init() { update_owner_letters({}); }

    // The formula as published, on pairs of its test data (Sharma et al., table 1: pairs 1, 7, 13, 17, 25, 34).
    void ciede2000MatchesThePublishedTestData() {
        struct Pair {
            Lab x, y;
            double expected;
        };
        const std::array<Pair, 6> pairs = {{
            {{50, 2.6772, -79.7751}, {50, 0, -82.7485}, 2.0425},
            {{50, 0, 0}, {50, -1, 2}, 2.3669},
            {{50, 2.5, 0}, {56, -27, -3}, 31.9030},
            {{50, 2.5, 0}, {50, 3.1736, 0.5854}, 1.0000},
            {{60.2574, -34.0099, 36.2677}, {60.4626, -34.1751, 39.4387}, 1.2644},
            {{2.0776, 0.0795, -1.1350}, {0.9033, -0.0636, -0.5514}, 0.9082},
        }};
        for (const Pair& pair : pairs) QVERIFY2(std::abs(ciede2000(pair.x, pair.y) - pair.expected) < 1e-4, qPrintable(QString::number(pair.expected)));
    }

    // 40 processes (and every letter, 52): no two colours within dE2000 12, none within 14 of the greys and whites
    // the floorplan draws (unowned TPC, hole outline, GPC box, export background).
    void fortyProcessesGetColoursAPersonTellsApart() {
        QVERIFY(owner_palette_size() >= 52);
        update_owner_letters(processes(40));
        std::vector<QColor> colours;
        for (const auto& [pid, start] : processes(40)) colours.push_back(owner_color(pid, start));
        for (int i = 0; i < owner_palette_size(); ++i) colours.push_back(owner_palette_color(i));
        for (std::size_t i = 0; i < colours.size(); ++i) {
            for (const QColor& grey : {unowned_color(), hole_color(), QColor(0xf7, 0xf7, 0xf9), QColor(Qt::white)})
                QVERIFY2(distance(colours[i], grey) >= kOwnerColourDistanceFromGreys, qPrintable(colours[i].name()));
            for (std::size_t j = i + 1; j < colours.size(); ++j) {
                if (colours[i] == colours[j] && i < 40 && j >= 40) continue;  // a process's colour is its letter's
                QVERIFY2(distance(colours[i], colours[j]) >= kOwnerColourDistance,
                         qPrintable(QString("%1 and %2: dE2000 %3").arg(colours[i].name(), colours[j].name()).arg(distance(colours[i], colours[j]))));
            }
        }
    }

    // Letters as top gives them (pid order for processes seen together), colours of the letters, kept for life.
    void lettersAndColoursAreStablePerProcessAndBetweenRuns() {
        const auto live = processes(33);
        update_owner_letters(live);
        std::map<std::pair<int, std::uint64_t>, std::pair<QChar, QColor>> first;
        QString letters;
        for (const auto& [pid, start] : live) {
            first[{pid, start}] = {owner_letter_of(owner_mark(pid, start)), owner_color(pid, start)};
            letters += owner_letter_of(owner_mark(pid, start));
        }
        QCOMPARE(letters, QString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"));
        // One exits, one starts: nobody else changes; the newcomer takes the freed letter.
        auto next = live;
        next.erase(*std::next(live.begin(), 2));  // C
        next.insert({3000, 9});
        update_owner_letters(next);
        for (const auto& [pid, start] : next)
            if (pid != 3000) QCOMPARE(owner_color(pid, start), first.at({pid, start}).second);
        QCOMPARE(owner_letter_of(owner_mark(3000, 9)), QChar('C'));
        // Another run (a fresh app) over the same processes: the same letters and colours, in any order seen.
        update_owner_letters({});
        update_owner_letters(live);
        for (const auto& [key, mark] : first) {
            QCOMPARE(owner_letter_of(owner_mark(key.first, key.second)), mark.first);
            QCOMPARE(owner_color(key.first, key.second), mark.second);
        }
    }

    // 33 owners: letter chips in a few rows, each inside the picture, none overlapping (it took 9 rows of
    // 250-pixel entries, half the pane).
    void theLegendOfThirtyThreeOwnersStaysCompact() {
        const Gpu h200 = load_snapshot("builtin:h200").gpus.at(0);
        const FloorplanGeometry geometry = FloorplanGeometry::layout(h200, 33 + 3, 33);
        const double legend_top = geometry.legend_entry(0).top();
        const double legend_bottom = geometry.legend_entry(33 + 2).bottom();
        QVERIFY2(legend_bottom - legend_top <= 6 * FloorplanGeometry::kLegendRowHeight, qPrintable(QString::number(legend_bottom - legend_top)));
        for (int i = 0; i < 36; ++i) {
            QVERIFY(QRectF(QPointF(0, 0), geometry.size()).contains(geometry.legend_entry(i)));
            for (int j = i + 1; j < 36; ++j) QVERIFY(!geometry.legend_entry(i).intersects(geometry.legend_entry(j)));
            QCOMPARE(geometry.legend_entry_at(geometry.legend_entry(i).center()), std::optional<int>(i));
        }
    }

    // A tile held by one process is painted in its colour without hatching; only a shared tile is hatched.
    void onlySharedTilesAreHatched() {
        const Gpu h200 = load_snapshot("builtin:h200").gpus.at(0);
        FloorplanScene scene;
        scene.gpu = &h200;
        update_owner_letters(processes(2));
        const auto live = processes(2);
        TpcMask first, second;
        first.set(0);
        first.set(8);
        second.set(8);
        scene.owners.push_back({live.begin()->first, live.begin()->second, "a", owner_color(live.begin()->first, live.begin()->second), first, 'A'});
        scene.owners.push_back({std::next(live.begin())->first, std::next(live.begin())->second, "b",
                                owner_color(std::next(live.begin())->first, std::next(live.begin())->second), second, 'B'});
        const FloorplanGeometry geometry = FloorplanGeometry::layout(h200, scene.legend_entry_count(), 2);
        QImage image(geometry.size().toSize(), QImage::Format_ARGB32);
        image.fill(Qt::white);
        {
            QPainter painter(&image);
            paint_floorplan(painter, geometry, scene);
        }
        // Count the pixels of a strip below the text (above any SMLP band) that are not the owner's colour.
        auto off_colour = [&](int tpc, const QColor& colour) {
            const QRectF tile = geometry.tile_for_key(tpc)->rect;
            int off = 0;
            for (int x = static_cast<int>(tile.left()) + 6; x < tile.right() - 6; ++x)
                for (int y = static_cast<int>(tile.top()) + 44; y < tile.bottom() - 3; ++y)
                    off += image.pixelColor(x, y).rgb() != colour.rgb() ? 1 : 0;
            return off;
        };
        QCOMPARE(off_colour(0, scene.owners[0].color), 0);
        QVERIFY(off_colour(8, scene.owners[0].color) > 10);  // hatched in B's colour
    }
};

QTEST_MAIN(OwnerPaletteTest)
#include "test_owner_palette.moc"
