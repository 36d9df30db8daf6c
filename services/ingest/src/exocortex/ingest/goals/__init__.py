"""Goals, their milestones, and progress notes stored as memories linked to a goal."""
