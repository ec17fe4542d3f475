#pragma once
// One applied change on the window's undo stack (a drop, a "give to", a profile). The stack sits over
// the controller's journal: undo asks the controller to revert exactly this change's journal entry
// (refused, and said so, when the processes were changed or exited since); redo plans the same masks
// again through the controller, with the same rules.
#include <functional>
#include <vector>

#include <QString>
#include <QUndoCommand>

#include "gui_session.hpp"

namespace gpupart::gui {

class ChangeCommand : public QUndoCommand {
public:
    using Reporter = std::function<void(const QString& message, bool error)>;

    // `applied` is the change already applied by the caller (the command is pushed after it worked).
    ChangeCommand(GuiSession& session, const Applied& applied, Reporter report);

    void undo() override;
    void redo() override;

private:
    GuiSession& session_;
    std::string action_;
    std::vector<MaskRequest> masks_;  // what the change left each process with
    JournalId entry_id_ = 0;
    bool first_redo_ = true;
    Reporter report_;
};

// Applies a plan when the controller allows it and pushes it; reports refusals instead. Returns
// whether it was applied.
bool apply_and_push(GuiSession& session, QUndoStack& stack, const Plan& plan, const ChangeCommand::Reporter& report);

// Plans "give these TPCs to that process" (or release them) against the state as it is now, then
// apply_and_push.
bool give_and_push(GuiSession& session, QUndoStack& stack, const widgets::DropTarget& target, const TpcMask& tpcs,
                   const ChangeCommand::Reporter& report);

}  // namespace gpupart::gui
