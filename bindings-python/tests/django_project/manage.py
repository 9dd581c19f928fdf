#!/usr/bin/env python3
"""A small Django project for libsnowflake.django.SnowflakeField, run with Django's own test
runner (`python manage.py test`) by bindings-python/tests/test_django.py: on SQLite, and on
PostgreSQL when SNOWFLAKE_TEST_PG (host,port,user,database) names a server (tests/servers starts one)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
