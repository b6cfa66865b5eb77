"""The engine: pure orchestration logic (no Rich, no files).

``generate_turn`` runs one director → agent cycle; ``run_round`` drives turns
until the round stops; ``Classroom`` is the state events fold into.
"""

from .classroom import Classroom
from .director import DirectorDecision, parse_director_decision
from .events import EVENT_ADAPTER, Event
from .models import AgentConfig, Message, StoreState, TurnConfig, TurnRequest, UserProfile
from .parser import StructuredStreamParser
from .round import RoundResult, run_round
from .turn import generate_turn

__all__ = [
    "EVENT_ADAPTER", "AgentConfig", "Classroom", "DirectorDecision", "Event", "Message",
    "RoundResult", "StoreState", "StructuredStreamParser", "TurnConfig", "TurnRequest",
    "UserProfile", "generate_turn", "parse_director_decision", "run_round",
]
