#include "plan_dialog.hpp"

#include <algorithm>

#include <QDialogButtonBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "cli_run.hpp"
#include "display_text.hpp"
#include "floorplan_view.hpp"
#include "model/user_error.hpp"

namespace gpupart::widgets {
namespace {

QTableWidgetItem* cell(const QString& text, bool right = false) {
    auto* item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QString rate_text(double rate) { return QString::number(rate, 'f', rate < 100 ? 1 : 0); }

// The preview is never shrunk below this scale: the picture's smallest text (10 px) stays 9 px or more, and a
// picture larger than its pane scrolls instead.
constexpr double kPreviewMinScale = 0.9;

}  // namespace

PlanDialog::PlanDialog(QWidget* parent)
    : QDialog(parent),
      targets_table_(new QTableWidget(0, 4, this)),
      result_(new QTableWidget(0, 8, this)),
      verdict_(new QLabel(this)),
      findings_(new QListWidget(this)),
      floorplan_(new FloorplanView(this)),
      preview_button_(new QPushButton("&Preview", this)),
      apply_button_(new QPushButton("&Apply", this)),
      run_(new CliRun(this)) {
    setWindowTitle("Plan partitions from measured curves — gpupart");
    targets_table_->setHorizontalHeaderLabels({"Process", "Class", "Alone /s", "Target (N% or rate/s)"});
    targets_table_->verticalHeader()->hide();
    targets_table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    result_->setHorizontalHeaderLabels({"PID", "Class", "Target", "Target /s", "TPCs", "Mask", "Planned /s", "Met"});
    result_->verticalHeader()->hide();
    result_->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
    verdict_->setWordWrap(true);
    findings_->setWordWrap(true);
    findings_->setMaximumHeight(90);
    // A picture of the proposal, not a place to change it: drags and clicks go nowhere.
    floorplan_->setAttribute(Qt::WA_TransparentForMouseEvents);
    floorplan_->setFocusPolicy(Qt::NoFocus);
    floorplan_->setIdleHint("The proposed partitions: what Apply gives each process");
    preview_ = new QScrollArea(this);
    preview_->setWidget(floorplan_);
    preview_->setWidgetResizable(true);  // fills the pane, down to the legible size set in setState
    preview_->setFrameShape(QFrame::NoFrame);
    apply_button_->setEnabled(false);
    apply_button_->setToolTip("Apply the previewed masks as one change (gpupart plan --apply; `gpupart undo` reverts it)");
    preview_button_->setToolTip("Ask gpupart plan what these targets need (nothing is changed)");

    auto* hint = new QLabel("A target is a share of the process's rate alone on the whole GPU (\"50%\") or a rate in "
                            "launches + graph replays per second (\"120\"). Leave it empty to keep the process out of the plan.",
                            this);
    hint->setWordWrap(true);
    auto* left = new QWidget(this);
    auto* left_layout = new QVBoxLayout(left);
    left_layout->setContentsMargins(0, 0, 0, 0);
    left_layout->addWidget(hint);
    left_layout->addWidget(targets_table_, 1);
    left_layout->addWidget(verdict_);
    left_layout->addWidget(result_, 1);
    left_layout->addWidget(new QLabel("Findings of the change:", this));
    left_layout->addWidget(findings_);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(left);
    splitter->addWidget(preview_);
    splitter->setSizes({600, 700});  // the tables' columns first; the picture gets the rest, and scrolls
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(preview_button_, QDialogButtonBox::ActionRole);
    buttons->addButton(apply_button_, QDialogButtonBox::ApplyRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(preview_button_, &QPushButton::clicked, this, &PlanDialog::preview);
    connect(apply_button_, &QPushButton::clicked, this, &PlanDialog::apply);
    connect(run_, &CliRun::finished, this, &PlanDialog::on_finished);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(splitter, 1);
    layout->addWidget(buttons);
    // Large enough for the tables and a legible picture, within the screen it opens on.
    const QRect screen = (parent != nullptr ? parent->screen() : QGuiApplication::primaryScreen())->availableGeometry();
    resize(std::min(1400, screen.width() * 9 / 10), std::min(860, screen.height() * 9 / 10));
}

double PlanDialog::previewTextScale() const { return floorplan_->zoom(); }

void PlanDialog::setCandidates(const std::vector<PlanCandidate>& candidates) {
    rows_.clear();
    targets_table_->setRowCount(static_cast<int>(candidates.size()));
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const int row = static_cast<int>(i);
        const PlanCandidate& c = candidates[i];
        targets_table_->setItem(row, 0, cell(c.label));
        targets_table_->setItem(row, 1, cell(c.intensity));
        targets_table_->setItem(row, 2, cell(rate_text(c.alone_rate), true));
        auto* edit = new QLineEdit(this);
        edit->setPlaceholderText("e.g. 50% or 120");
        // Editing a target makes the preview stale: Apply waits for a new one.
        connect(edit, &QLineEdit::textEdited, this, [this] { apply_button_->setEnabled(false); });
        targets_table_->setCellWidget(row, 3, edit);
        rows_.push_back({c, edit});
    }
    targets_table_->resizeColumnsToContents();
    targets_table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    preview_button_->setEnabled(!rows_.empty());
    if (rows_.empty()) verdict_->setText("No process shown has a measured curve on this GPU: measure one first (Scaling panel).");
}

void PlanDialog::setState(const SystemState& state, const QString& title) {
    state_ = state;
    title_ = title;
    floorplan_->setGpu(state.gpu, title);
    floorplan_->setOwners(owners_from_state(state));
    const QSizeF legible = floorplan_->geometry().size() * kPreviewMinScale;
    floorplan_->setMinimumSize(static_cast<int>(legible.width()) + 1, static_cast<int>(legible.height()) + 1 + FloorplanView::kBannerHeight);
}

QStringList PlanDialog::targets() const {
    QStringList out;
    for (const Row& row : rows_) {
        const QString text = row.target->text().trimmed().remove(' ');
        if (!text.isEmpty()) out << QString("%1=%2").arg(row.candidate.pid).arg(text);
    }
    return out;
}

void PlanDialog::setTarget(int pid, const QString& target) {
    for (Row& row : rows_)
        if (row.candidate.pid == pid) row.target->setText(target);
    apply_button_->setEnabled(false);
}

bool PlanDialog::running() const { return run_->running(); }
void PlanDialog::preview() { run_plan(false); }
void PlanDialog::apply() { run_plan(true); }

void PlanDialog::run_plan(bool apply) {
    if (running()) return;
    const QStringList wanted = apply ? previewed_targets_ : targets();
    if (wanted.isEmpty()) {
        verdict_->setText("Type a target for at least one process (\"50%\" or a rate per second).");
        return;
    }
    QString program = cli_path_;
    try {
        if (program.isEmpty()) program = gpupart_cli_path();
    } catch (const UserError& error) {
        verdict_->setText(plain_text(error.what()));
        return;
    }
    QStringList args{"plan"};
    for (const QString& target : wanted) args << "--target" << target;
    args << cli_args_ << "--json";
    if (apply) args << "--apply";
    applying_ = apply;
    previewed_targets_ = wanted;
    preview_button_->setEnabled(false);
    apply_button_->setEnabled(false);
    verdict_->setText(apply ? "Applying…" : "Planning…");
    run_->start(program, args);
}

void PlanDialog::on_finished(bool) {
    preview_button_->setEnabled(!rows_.empty());
    QString problem;
    // An infeasible plan exits 1 with its JSON on stdout: the JSON decides, the status only when there is none.
    const std::optional<PlanReply> reply = parse_plan_reply(run_->standardOutput(), &problem);
    if (!reply) {
        const QString line = run_->errorLine();
        verdict_->setText(line.isEmpty() ? problem : line);
        verdict_->setStyleSheet("color: #b00020;");
        return;
    }
    showReply(*reply, applying_);
    if (applying_ && reply->applied) emit applied(*reply);
}

void PlanDialog::showReply(const PlanReply& reply, bool applied) {
    reply_ = reply;
    result_->setRowCount(static_cast<int>(reply.processes.size()));
    for (std::size_t i = 0; i < reply.processes.size(); ++i) {
        const PlanReply::Process& p = reply.processes[i];
        const int row = static_cast<int>(i);
        result_->setItem(row, 0, cell(QString::number(p.pid), true));
        result_->setItem(row, 1, cell(p.intensity));
        result_->setItem(row, 2, cell(p.target.section('=', 1)));
        result_->setItem(row, 3, cell(rate_text(p.target_rate), true));
        result_->setItem(row, 4, cell(p.partition >= 0 ? QString::number(p.tpcs) : "-", true));
        result_->setItem(row, 5, cell(p.mask.isEmpty() ? "-" : p.mask + (p.in_conflict ? " (shared)" : "")));
        result_->setItem(row, 6, cell(rate_text(p.planned_rate), true));
        QTableWidgetItem* met = cell(p.met ? "yes" : "no");
        if (!p.met) met->setForeground(QColor(0xb0, 0x00, 0x20));
        result_->setItem(row, 7, met);
    }
    result_->resizeColumnsToContents();
    result_->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
    verdict_->setText(plan_verdict(reply));
    verdict_->setStyleSheet(reply.feasible && !reply.refused ? QString() : QString("color: #b00020;"));
    findings_->clear();
    for (const PlanReply::Finding& f : reply.findings)
        if (f.severity != "info" || f.is_new)
            findings_->addItem(QString("%1%2: %3").arg(f.is_new ? "new " : "", f.severity, plain_text(f.message.toStdString())));
    if (findings_->count() == 0) findings_->addItem(reply.has_change ? "none" : "no change (nothing can be applied)");
    apply_button_->setEnabled(!applied && reply.feasible && reply.has_change && !reply.refused);
    show_floorplan(reply);
}

void PlanDialog::show_floorplan(const PlanReply& reply) {
    if (!state_) return;
    SystemState proposed = *state_;
    for (const PlanReply::Change& change : reply.changes) {
        const std::optional<TpcMask> mask = TpcMask::parse_hex(change.after_mask.toStdString());
        for (ProcessState& process : proposed.processes)
            if (process.pid == change.pid && mask) {
                process.partitioned = true;
                process.mask = *mask;
            }
    }
    floorplan_->setGpu(proposed.gpu, title_ + (reply.has_change ? " — proposed" : " — now"));
    floorplan_->setOwners(owners_from_state(proposed));
}

QString PlanDialog::verdictText() const { return verdict_->text(); }

QStringList PlanDialog::findingLines() const {
    QStringList lines;
    for (int i = 0; i < findings_->count(); ++i) lines << findings_->item(i)->text();
    return lines;
}

}  // namespace gpupart::widgets
