"""``rollwise explore``: an explicit-state model checker over the pure controllers (issue 9).

Every reachable state of one StatefulSet for small sizes, with the environment's moves as nondeterministic
choices, the controllers' Plans as their moves, optional perturbations of the controllers' view, safety
invariants checked on every state and move, and liveness over the healthy sub-graph.
"""

from rollwise.explore.model import PERTURBATIONS, SAFETY_ACTIONS, Bounds, Move
from rollwise.explore.search import Exploration, Violation, explore
from rollwise.explore.world import initial_node

__all__ = ["PERTURBATIONS", "SAFETY_ACTIONS", "Bounds", "Exploration", "Move", "Violation", "explore", "initial_node"]
