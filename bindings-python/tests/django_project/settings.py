"""Settings of the test project: SQLite, or the PostgreSQL of SNOWFLAKE_TEST_PG (host,port,user,database)."""
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
SECRET_KEY = "tests-only"
INSTALLED_APPS = ["orders"]
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_pg = os.environ.get("SNOWFLAKE_TEST_PG")
if _pg:
    # host (the socket directory), port, user and database of the test's own server.
    host, port, user, name = _pg.split(",")
    DATABASES = {
        "default": {"ENGINE": "django.db.backends.postgresql", "NAME": name, "HOST": host, "PORT": port, "USER": user}
    }
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(BASE_DIR / "unused.sqlite3")}}
