#pragma once
// One applied change on the window's undo stack. The stack sits over the controller's journal: undo
// asks the controller to revert exactly this change's journal entry (refused, and said so, when the
// processes were changed or exited since), redo plans the same give/release again.
#include <functional>

#include <QString>
#include <QUndoCommand>

#include "gui_session.hpp"

namespace gpupart::gui {

class ChangeCommand : public QUndoCommand {
public:
    using Reporter = std::function<void(const QString& message, bool error)>;

    // `applied` is the change already applied by the caller (the command is pushed after it worked).
    ChangeCommand(GuiSession& session, widgets::DropTarget target, TpcMask tpcs, Applied applied, Reporter report);

    void undo() override;
    void redo() override;

private:
    GuiSession& session_;
    widgets::DropTarget target_;
    TpcMask tpcs_;
    int entry_id_ = 0;
    bool first_redo_ = true;
    Reporter report_;
};

// Plans the change, applies it when the controller allows, and pushes it; reports refusals instead.
// Returns whether it was applied.
bool give_and_push(GuiSession& session, QUndoStack& stack, const widgets::DropTarget& target, const TpcMask& tpcs,
                   const ChangeCommand::Reporter& report);

}  // namespace gpupart::gui
