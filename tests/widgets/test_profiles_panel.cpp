// ProfilesPanel with a real controller: a real registry with a forked registered process, real profile
// files in temporary user and system directories, the real journal. Apply goes through the callback
// (here straight to Controller::apply, as the main window's undo command does), and changes the
// process's mask in the registry; refusals and errors show inline.
#include <filesystem>
#include <fstream>

#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>

#include "controller/profile_apply.hpp"
#include "model/user_error.hpp"
#include "profiles_panel.hpp"
#include "registry_test_support.hpp"
#include "screenshot.hpp"
#include "snapshot/snapshot_file.hpp"

using namespace gpupart;
using namespace gpupart::widgets;
using gpupart::test::RegisteredChild;
using gpupart::test::TempRegistry;

namespace {

// GPC 1 of the built-in H200 as TPC numbers (descriptor bits 9-16).
constexpr const char* kGpc1 = "1,9,17,25,32,39,46,53";

const Gpu& h200() {
    static const Snapshot snapshot = load_snapshot("builtin:h200");
    return snapshot.gpus.at(0);
}

void write_profile(const QString& dir, const std::string& name, const std::string& tpcs, const std::string& description) {
    std::filesystem::create_directories(dir.toStdString());
    std::ofstream(dir.toStdString() + "/" + name + ".json")
        << R"({"format": "gpupart-profile", "version": 2, "name": ")" << name << R"(", "description": ")" << description
        << R"(", "rules": [{"match": {"exe": "registered-child"}, "gpu": 0, "tpcs": ")" << tpcs << R"("}]})";
}

QPushButton* button(ProfilesPanel& panel, const QString& text) {
    for (QPushButton* b : panel.findChildren<QPushButton*>())
        if (b->text() == text) return b;
    return nullptr;
}

}  // namespace

class TestProfilesPanel : public QObject {
    Q_OBJECT
private:
    QTemporaryDir config_;
    QString user_dir_, system_dir_;
    ProfileStore store_;

private slots:
    void initTestCase() {
        QVERIFY(config_.isValid());
        user_dir_ = config_.filePath(QStringLiteral("user"));
        system_dir_ = config_.filePath(QStringLiteral("system"));
        // The standard store reads XDG_CONFIG_HOME; point it here too, so nothing can touch the real one.
        qputenv("XDG_CONFIG_HOME", config_.path().toUtf8());
        store_.user_dir = user_dir_.toStdString();
        store_.system_dir = system_dir_.toStdString();
        write_profile(user_dir_, "serving", "gpc1", "the serving layout");
        write_profile(user_dir_, "toobig", "100 tpcs", "more TPCs than the GPU has");
        write_profile(system_dir_, "site", "gpc2", "the site default");
    }

    void listsWithoutAController() {
        ProfilesPanel panel;
        panel.setStore(store_);
        QCOMPARE(panel.profileNames(), (QStringList{QStringLiteral("serving"), QStringLiteral("site"), QStringLiteral("toobig")}));
        QVERIFY(panel.selectProfile(QStringLiteral("serving")));
        QVERIFY(!button(panel, QStringLiteral("&Apply"))->isEnabled());
        QVERIFY(!button(panel, QStringLiteral("&Diff against now"))->isEnabled());
        QVERIFY(button(panel, QStringLiteral("De&lete"))->isEnabled());
        panel.applySelected();
        QVERIFY(panel.messageIsError());
        QCOMPARE(panel.messageText(), QStringLiteral("no GPU to apply the profile to"));
        // A system profile cannot be deleted from here.
        QVERIFY(panel.selectProfile(QStringLiteral("site")));
        QVERIFY(!button(panel, QStringLiteral("De&lete"))->isEnabled());
        panel.deleteSelected();
        QVERIFY(panel.messageIsError());
        QVERIFY(panel.messageText().contains(QStringLiteral("is a system profile")));
        QVERIFY(QFileInfo::exists(system_dir_ + QStringLiteral("/site.json")));
    }

    void diffApplySaveDelete() {
        TempRegistry registry;
        // Its slot holds descriptor bits 0-3 (the shim's form): TPCs 0,8,16,24 of the built-in H200, gpc0's first four.
        RegisteredChild child(registry.dir, "0xf");
        Controller controller(Registry(registry.dir), h200(), Journal(registry.dir + "/history.jsonl"));
        const auto mask_of = [&] {  // as TPC numbers, read through the H200's map
            const auto record = Registry(registry.dir, h200()).find_live(child.pid);
            return record.control && test::has_mask_on(*record.control) ? test::allowed_on(*record.control).to_list() : std::string("all");
        };

        ProfilesPanel panel;
        panel.setStore(store_);
        panel.setController(&controller);
        int applied = 0;
        panel.applyPlan = [&](const Plan& plan) {
            ++applied;
            controller.apply(plan);
        };
        QVERIFY(panel.selectProfile(QStringLiteral("serving")));
        QVERIFY(button(panel, QStringLiteral("&Apply"))->isEnabled());

        // Diff: what would change (to gpc1: TPCs 1,9,17,25,32,39,46,53), and nothing changes.
        panel.diffSelected();
        QVERIFY2(panel.diffText().contains(
                     QStringLiteral("~ process %1 (registered-child --test): TPCs 0,8,16,24 -> %2").arg(child.pid).arg(kGpc1)),
                 qPrintable(panel.diffText()));
        QVERIFY(panel.diffText().contains(QStringLiteral("would arm: ")));
        QCOMPARE(mask_of(), "0,8,16,24");

        // Apply: through the callback, into the registry, armed for later processes.
        panel.applySelected();
        QVERIFY2(!panel.messageIsError(), qPrintable(panel.messageText()));
        QCOMPARE(panel.messageText(), QStringLiteral("applied profile serving: 1 process changed; 1 rule armed for processes that start later"));
        QCOMPARE(applied, 1);
        QVERIFY2(panel.diffText().contains(QStringLiteral("  armed: profile serving line 1")), qPrintable(panel.diffText()));
        const ArmedRules armed = read_armed_rules(registry.dir);  // by the same plan, through the controller
        QVERIFY(armed.has_value());
        QCOMPARE(armed->count, 1u);
        QCOMPARE(QString(armed->profile), QStringLiteral("serving"));
        QCOMPARE(mask_of(), kGpc1);
        QVERIFY(gpupart::test::save_screenshot(panel, QStringLiteral("profiles_panel"), {760, 520}));

        // A profile the controller refuses: inline, one line, the callback never called.
        QVERIFY(panel.selectProfile(QStringLiteral("toobig")));
        panel.applySelected();
        QVERIFY(panel.messageIsError());
        QVERIFY2(panel.messageText().startsWith(QStringLiteral("profile toobig not applied: ")), qPrintable(panel.messageText()));
        QVERIFY(panel.messageText().endsWith(QStringLiteral("; nothing changed")));
        QCOMPARE(applied, 1);
        QCOMPARE(mask_of(), kGpc1);

        // The callback's own failure (e.g. the process changed meanwhile) is shown as it said it.
        panel.applyPlan = [](const Plan&) { throw UserError("process 1 changed since the plan was made; nothing changed"); };
        QVERIFY(panel.selectProfile(QStringLiteral("site")));  // gpc2: a real change
        panel.applySelected();
        QVERIFY(panel.messageIsError());
        QCOMPARE(panel.messageText(), QStringLiteral("process 1 changed since the plan was made; nothing changed"));

        // Save current as...: the partitions as they are now.
        controller.refresh();
        panel.askName = [] { return std::optional<QString>(QStringLiteral("now")); };
        panel.saveCurrentAs();
        QVERIFY2(!panel.messageIsError(), qPrintable(panel.messageText()));
        QCOMPARE(panel.selectedProfile(), QStringLiteral("now"));
        const StoredProfile saved = store_.load("now");
        QCOMPARE(saved.profile.rules.size(), std::size_t{1});
        QCOMPARE(saved.profile.rules[0].match.exe, std::optional<std::string>("registered-child"));
        QCOMPARE(saved.profile.rules[0].tpcs, std::string(kGpc1));
        // Saving over it asks first; "no" keeps the file.
        QString asked;
        panel.confirm = [&](const QString& question) {
            asked = question;
            return false;
        };
        QVERIFY(!panel.saveCurrentAs(QStringLiteral("now")));
        QCOMPARE(asked, QStringLiteral("Replace your profile 'now' with the current partitions?"));
        QCOMPARE(panel.messageText(), QStringLiteral("profile now kept as it was"));
        QVERIFY(!panel.saveCurrentAs(QStringLiteral("bad name")));
        QVERIFY(panel.messageIsError());
        QVERIFY(panel.messageText().startsWith(QStringLiteral("'bad name' is not a profile name")));

        // Delete asks, then removes the file.
        panel.confirm = [](const QString&) { return true; };
        QVERIFY(panel.selectProfile(QStringLiteral("now")));
        panel.deleteSelected();
        QVERIFY2(!panel.messageIsError(), qPrintable(panel.messageText()));
        QVERIFY(!panel.profileNames().contains(QStringLiteral("now")));
        QVERIFY(!QFileInfo::exists(user_dir_ + QStringLiteral("/now.json")));
        child.finish();
    }

    void unreadableProfilesAreReportedInline() {
        std::ofstream((user_dir_ + QStringLiteral("/broken.json")).toStdString()) << "{ not json";
        ProfilesPanel panel;
        panel.setStore(store_);
        QVERIFY(panel.messageIsError());
        QVERIFY2(panel.messageText().contains(QStringLiteral("broken.json")), qPrintable(panel.messageText()));
        QVERIFY(!panel.messageText().contains(QLatin1Char('\n')));
        QVERIFY(panel.profileNames().contains(QStringLiteral("serving")));  // the good ones are still listed
        std::filesystem::remove((user_dir_ + QStringLiteral("/broken.json")).toStdString());
        panel.reload();  // fixed: the complaint goes
        QVERIFY(!panel.messageIsError());
        QCOMPARE(panel.messageText(), QString());
    }
};

QTEST_MAIN(TestProfilesPanel)
#include "test_profiles_panel.moc"
