"""The engine: pure orchestration logic (no Rich, no files).

``turn.generate_turn`` runs one director → agent cycle; ``round.run_round`` drives turns
until the round stops; ``classroom.Classroom`` is the state events fold into.  Nothing is
imported here: importing one engine module loads only what that module needs.
"""
