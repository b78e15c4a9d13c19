"""The workshop's class database: a class, its students and their answers (``schema``), the engine for SQLite
or PostgreSQL with its migrations run on start (``engine``), the calls the Workshop page makes (``store``) and the
values they return (``records``)."""

__all__ = [
    "engine",  # ClassroomError, make_engine, upgrade, backend_name
    "limits",  # RateLimit, LIMITS: per-session limits on joining, answering, key tries
    "records",  # NewClass, Joined, ClassState, Progress, ExerciseCounts
    "schema",  # Base, Classroom, Student, Answer, NICKNAME_MAX
    "seats",  # StudentCalls: join, rejoin, record_answer, my_answers, state
    "store",  # ClassStore, open_store
]
