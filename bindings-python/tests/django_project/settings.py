"""Settings of the test project: SQLite, or the PostgreSQL of SNOWFLAKE_TEST_PG (host,port,user,database)."""
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
SECRET_KEY = "tests-only"
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "orders",
]
# The admin, for its add form of a Snowflake primary key (issue 40).
ROOT_URLCONF = "urls"
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
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
