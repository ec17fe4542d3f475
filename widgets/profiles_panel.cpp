#include "profiles_panel.hpp"

#include <QApplication>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "controller/profile_apply.hpp"
#include "controller/profile_capture.hpp"
#include "display_text.hpp"
#include "model/user_error.hpp"

namespace gpupart::widgets {
namespace {

// Everything this panel shows came from files (profile names, paths, problems) or quotes other
// people's command lines (the diff): escaped, one line per string.
QString qs(const std::string& text) { return plain_text(text); }

enum Column { NameColumn, RulesColumn, WhereColumn, DescriptionColumn };

// What applying a profile now would do, for the diff pane: the per-process diff, the controller's
// findings, and what gets armed for processes that start later.
// `verb` says what happened: "compared with", "applied to", "not applied to".
QString diff_report(const Controller& controller, const StoredProfile& stored, const QString& verb) {
    const int gpu = controller.state().gpu.index;
    const ProfileApplication application = plan_profile(controller, stored.profile, gpu);
    QString text = QStringLiteral("Profile %1 %2 the processes running on GPU %3\n(%4)\n\n")
                       .arg(qs(stored.profile.name), verb).arg(gpu).arg(qs(stored.path));
    const auto lines = profile_diff(controller, stored.profile, gpu);
    if (controller.state().processes.empty()) text += QStringLiteral("  no partitioned process is running\n");
    for (const std::string& line : lines) text += qs(line) + QLatin1Char('\n');
    bool any = false;
    for (const Finding& finding : application.plan.findings) {
        if (finding.severity == Severity::error) continue;  // profile_diff already listed errors ("! ...")
        if (!any) text += QStringLiteral("\nFindings\n");
        any = true;
        text += QStringLiteral("  ") + qs(finding_line(finding)) + QLatin1Char('\n');
    }
    if (!application.armed.empty() || !application.not_armed.empty()) text += QStringLiteral("\nFor processes that start later\n");
    // The report is made just before the apply: its plan is the one applied, so say what it did.
    const QString arm = verb == QStringLiteral("applied to")       ? QStringLiteral("  armed: ")
                        : verb == QStringLiteral("not applied to") ? QStringLiteral("  would have armed: ")
                                                                   : QStringLiteral("  would arm: ");
    for (const std::string& line : application.armed) text += arm + qs(line) + QLatin1Char('\n');
    for (const std::string& line : application.not_armed) text += QStringLiteral("  not armed: ") + qs(line) + QLatin1Char('\n');
    return text;
}

std::string refused_line(const QString& name, const Finding& finding) {
    return QStringLiteral("profile %1 not applied: %2 [%3]; nothing changed").arg(name, qs(finding.message), qs(finding.rule)).toStdString();
}

QString plural(std::size_t count, const char* one, const char* many) {
    return QStringLiteral("%1 %2").arg(count).arg(QLatin1String(count == 1 ? one : many));
}

}  // namespace

ProfilesPanel::ProfilesPanel(QWidget* parent)
    : QWidget(parent),
      store_(ProfileStore::standard()),
      list_(new QTreeWidget(this)),
      apply_(new QPushButton(QStringLiteral("&Apply"), this)),
      save_(new QPushButton(QStringLiteral("&Save current as..."), this)),
      diff_(new QPushButton(QStringLiteral("&Diff against now"), this)),
      delete_(new QPushButton(QStringLiteral("De&lete"), this)),
      message_icon_(new QLabel(this)),
      message_(new QLabel(this)),
      diff_text_(new QPlainTextEdit(this)) {
    confirm = [this](const QString& question) {
        return QMessageBox::question(this, QStringLiteral("Profiles"), question) == QMessageBox::Yes;
    };
    askName = [this]() -> std::optional<QString> {
        bool ok = false;
        const QString name = QInputDialog::getText(this, QStringLiteral("Save current partitions"),
                                                   QStringLiteral("Profile name (letters, digits, '.', '_', '-'):"),
                                                   QLineEdit::Normal, QString(), &ok);
        if (!ok) return std::nullopt;
        return name.trimmed();
    };

    list_->setColumnCount(4);
    list_->setHeaderLabels({QStringLiteral("Profile"), QStringLiteral("Rules"), QStringLiteral("Where"), QStringLiteral("Description")});
    list_->setRootIsDecorated(false);
    list_->setUniformRowHeights(true);
    list_->setAlternatingRowColors(true);
    list_->header()->setStretchLastSection(true);
    diff_text_->setReadOnly(true);
    diff_text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));  // the diff lines are columns
    diff_text_->setLineWrapMode(QPlainTextEdit::WidgetWidth);  // findings are sentences: wrap, do not scroll
    diff_text_->setPlaceholderText(QStringLiteral("Select a profile and press \"Diff against now\" to see what applying it would change."));
    // One line, never wider than the panel: long messages elide at the edge (the tooltip has all).
    message_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->setTextFormat(Qt::PlainText);  // a profile name or file name may hold "<b>"

    connect(apply_, &QPushButton::clicked, this, &ProfilesPanel::applySelected);
    connect(save_, &QPushButton::clicked, this, qOverload<>(&ProfilesPanel::saveCurrentAs));
    connect(diff_, &QPushButton::clicked, this, &ProfilesPanel::diffSelected);
    connect(delete_, &QPushButton::clicked, this, &ProfilesPanel::deleteSelected);
    connect(list_, &QTreeWidget::itemSelectionChanged, this, &ProfilesPanel::update_buttons);
    connect(list_, &QTreeWidget::itemActivated, this, [this] { diffSelected(); });  // looking is safe; applying is a button

    auto* buttons = new QHBoxLayout;
    for (QPushButton* button : {apply_, save_, diff_, delete_}) buttons->addWidget(button);
    buttons->addStretch(1);
    auto* message_row = new QHBoxLayout;
    message_row->addWidget(message_icon_);
    message_row->addWidget(message_, 1);
    auto* top = new QWidget(this);
    auto* top_layout = new QVBoxLayout(top);
    top_layout->setContentsMargins(0, 0, 0, 0);
    top_layout->addWidget(list_, 1);
    top_layout->addLayout(buttons);
    top_layout->addLayout(message_row);
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(top);
    splitter->addWidget(diff_text_);
    splitter->setStretchFactor(0, 2);  // a few profiles; the diff is what one reads
    splitter->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(splitter);
    show_message({}, false);
    update_buttons();
}

void ProfilesPanel::setStore(const ProfileStore& store) {
    store_ = store;
    reload();
}

void ProfilesPanel::setController(const Controller* controller) {
    controller_ = controller;
    update_buttons();
}

void ProfilesPanel::showEvent(QShowEvent* event) {
    reload();  // the CLI may have saved or deleted profiles while the panel was hidden
    QWidget::showEvent(event);
}

void ProfilesPanel::reload() {
    const QString keep = selectedProfile();
    std::vector<std::string> problems;
    profiles_ = store_.list(&problems);
    list_->clear();
    for (const StoredProfile& stored : profiles_) {
        auto* item = new QTreeWidgetItem(list_);
        item->setText(NameColumn, qs(stored.profile.name));
        item->setText(RulesColumn, QString::number(stored.profile.rules.size()));
        item->setTextAlignment(RulesColumn, Qt::AlignRight | Qt::AlignVCenter);
        item->setText(WhereColumn, stored.system ? QStringLiteral("system") : QStringLiteral("yours"));
        item->setText(DescriptionColumn, qs(stored.profile.description));
        for (int column = 0; column < 4; ++column) item->setToolTip(column, tooltip_text(qs(stored.path)));
    }
    for (int column = 0; column < DescriptionColumn; ++column) list_->resizeColumnToContents(column);
    if (!keep.isEmpty()) selectProfile(keep);
    if (problems.empty() && showing_load_problem_) show_message({}, false);  // the file was fixed or removed
    showing_load_problem_ = !problems.empty();
    if (!problems.empty())
        show_message(problems.size() == 1 ? qs(problems.front())
                                          : QStringLiteral("%1 profiles could not be read; first: %2").arg(problems.size()).arg(qs(problems.front())),
                     true);
    update_buttons();
}

QStringList ProfilesPanel::profileNames() const {
    QStringList names;
    for (const StoredProfile& stored : profiles_) names << qs(stored.profile.name);
    return names;
}

bool ProfilesPanel::selectProfile(const QString& name) {
    for (int row = 0; row < list_->topLevelItemCount(); ++row) {
        if (list_->topLevelItem(row)->text(NameColumn) != name) continue;
        list_->setCurrentItem(list_->topLevelItem(row));
        return true;
    }
    return false;
}

const StoredProfile* ProfilesPanel::selected() const {
    const QList<QTreeWidgetItem*> items = list_->selectedItems();
    if (items.isEmpty()) return nullptr;
    const int row = list_->indexOfTopLevelItem(items.front());
    return row >= 0 && row < static_cast<int>(profiles_.size()) ? &profiles_[static_cast<std::size_t>(row)] : nullptr;
}

QString ProfilesPanel::selectedProfile() const {
    const StoredProfile* stored = selected();
    return stored != nullptr ? qs(stored->profile.name) : QString();
}

QString ProfilesPanel::diffText() const { return diff_text_->toPlainText(); }
QString ProfilesPanel::messageText() const { return message_->text(); }
bool ProfilesPanel::messageIsError() const { return message_is_error_; }

void ProfilesPanel::update_buttons() {
    const StoredProfile* stored = selected();
    apply_->setEnabled(stored != nullptr && controller_ != nullptr && applyPlan != nullptr);
    save_->setEnabled(controller_ != nullptr);
    diff_->setEnabled(stored != nullptr && controller_ != nullptr);
    delete_->setEnabled(stored != nullptr && !stored->system);  // /etc/gpupart/profiles belongs to the admin
    delete_->setToolTip(stored != nullptr && stored->system ? QStringLiteral("System profiles are the administrator's: only yours can be deleted")
                                                           : QString());
}

void ProfilesPanel::show_message(const QString& text, bool error) {
    message_is_error_ = error && !text.isEmpty();
    const QString line = text.simplified();  // one line, whatever the error said
    message_->setText(line);
    message_->setToolTip(tooltip_text(line));
    QPalette palette = message_->palette();
    palette.setColor(QPalette::WindowText, error ? QColor(0xb0, 0x1c, 0x1c) : QApplication::palette().color(QPalette::WindowText));
    message_->setPalette(palette);
    const int size = style()->pixelMetric(QStyle::PM_SmallIconSize);
    message_icon_->setPixmap(text.isEmpty() ? QPixmap()
                                            : style()->standardIcon(error ? QStyle::SP_MessageBoxCritical : QStyle::SP_DialogApplyButton)
                                                  .pixmap(size, size));
    message_icon_->setVisible(!text.isEmpty());
}

void ProfilesPanel::guarded(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& error) {  // UserError above all; anything else is still one line, not a crash
        show_message(QString::fromUtf8(error.what()), true);
    }
}

void ProfilesPanel::applySelected() {
    guarded([this] {
        const StoredProfile* stored = selected();
        if (stored == nullptr) throw UserError("select a profile to apply");
        if (controller_ == nullptr || !applyPlan) throw UserError("no GPU to apply the profile to");
        const StoredProfile profile = store_.load(stored->path);  // the file as it is now, not as listed
        const ProfileApplication application = plan_profile(*controller_, profile.profile, controller_->state().gpu.index);
        const bool refused = application.plan.refused();
        diff_text_->setPlainText(diff_report(*controller_, profile, refused ? QStringLiteral("not applied to") : QStringLiteral("applied to")));
        const QString name = qs(profile.profile.name);
        if (refused) {
            for (const Finding& finding : application.plan.findings)
                if (finding.severity == Severity::error)
                    throw UserError(refused_line(name, finding));
        }
        // One plan: the masks and the rules for later processes, applied and undone together.
        if (!application.plan.changes_nothing()) applyPlan(application.plan);
        const std::size_t changed = application.plan.changes.size();
        QString done = changed > 0 ? QStringLiteral("applied profile %1: %2 changed").arg(name, plural(changed, "process", "processes"))
                                   : QStringLiteral("profile %1 matches no running process: nothing changed now").arg(name);
        if (application.rules.count > 0)
            done += QStringLiteral("; %1 for processes that start later").arg(plural(application.rules.count, "rule armed", "rules armed"));
        else if (application.plan.rules)
            done += QStringLiteral("; your rules for processes that start later are disarmed");
        show_message(done, false);
    });
}

void ProfilesPanel::saveCurrentAs() {
    if (const auto name = askName ? askName() : std::nullopt) saveCurrentAs(*name);
}

bool ProfilesPanel::saveCurrentAs(const QString& name) {
    bool saved = false;
    guarded([&] {
        if (controller_ == nullptr) throw UserError("no GPU state to save");
        const std::string text = name.toStdString();
        if (!valid_profile_name(text))
            throw UserError("'" + text + "' is not a profile name: use 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '.')");
        bool overwrite = false;
        const QString path = QString::fromStdString(store_.user_dir) + QLatin1Char('/') + name + QStringLiteral(".json");
        if (QFileInfo::exists(path)) {
            if (!confirm || !confirm(QStringLiteral("Replace your profile '%1' with the current partitions?").arg(name))) {
                show_message(QStringLiteral("profile %1 kept as it was").arg(name), false);
                return;
            }
            overwrite = true;
        }
        const Profile profile = capture_profile(controller_->state(), text);
        const std::string written = store_.save(profile, overwrite);
        reload();
        selectProfile(name);
        show_message(QStringLiteral("saved %1 to %2").arg(plural(profile.rules.size(), "rule", "rules"), qs(written)), false);
        saved = true;
    });
    return saved;
}

void ProfilesPanel::diffSelected() {
    guarded([this] {
        const StoredProfile* stored = selected();
        if (stored == nullptr) throw UserError("select a profile to compare with the running processes");
        if (controller_ == nullptr) throw UserError("no GPU state to compare the profile with");
        diff_text_->setPlainText(diff_report(*controller_, store_.load(stored->path), QStringLiteral("compared with")));
        show_message({}, false);
    });
}

void ProfilesPanel::deleteSelected() {
    guarded([this] {
        const StoredProfile* stored = selected();
        if (stored == nullptr) throw UserError("select a profile to delete");
        const QString name = qs(stored->profile.name);
        if (!stored->system && (!confirm || !confirm(QStringLiteral("Delete your profile '%1' (%2)?").arg(name, qs(stored->path))))) return;
        const std::string removed = store_.remove(name.toStdString());  // refuses system profiles with the reason
        reload();
        diff_text_->clear();
        show_message(QStringLiteral("deleted %1").arg(qs(removed)), false);
    });
}

}  // namespace gpupart::widgets
