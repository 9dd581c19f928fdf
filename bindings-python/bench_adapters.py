"""What each Python adapter costs per row inserted, beside the plain column.

    python bindings-python/bench_adapters.py [--pg DSN] [--rows N]

For SQLAlchemy (ORM, ``add_all`` + ``commit``) and Django (``create()`` one row at a time, and
``bulk_create``): the same table with a Snowflake key (``SnowflakeId`` + ``snowflake_default``,
``SnowflakeField``) and with a plain autoincrement ``BIGINT`` key, on SQLite in memory and, with
``--pg``, on PostgreSQL; for pydantic, validating and dumping a model with a ``SnowflakeId``
beside one with a plain ``int``. Prints microseconds per row, the best of three runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, Optional

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from libsnowflake import Generator
from libsnowflake.pydantic import SnowflakeId
from libsnowflake.sqlalchemy import SnowflakeId as SnowflakeColumn, snowflake_default

IDS = Generator("twitter", node={"datacenter": 1, "worker": 1}, max_wait_ms=1000)


def best(fn: Callable[[], None], rows: int) -> float:
    times = []
    for _ in range(3):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) / rows * 1e6


class Base(DeclarativeBase):
    pass


class SnowOrder(Base):
    __tablename__ = "bench_snow"
    id: Mapped[int] = mapped_column(SnowflakeColumn, primary_key=True, default=snowflake_default(IDS))
    item: Mapped[str] = mapped_column(sa.String(40))


class PlainOrder(Base):
    __tablename__ = "bench_plain"
    id: Mapped[int] = mapped_column(sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True)
    item: Mapped[str] = mapped_column(sa.String(40))


def sqlalchemy_bench(engine: sa.Engine, rows: int) -> tuple[float, float]:
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)

    def insert(cls: Any) -> Callable[[], None]:
        def run() -> None:
            with Session(engine) as s:
                s.add_all([cls(item="x") for _ in range(rows)])
                s.commit()
        return run

    result = best(insert(PlainOrder), rows), best(insert(SnowOrder), rows)
    Base.metadata.drop_all(engine)
    return result


def django_bench(pg: Optional[str], rows: int) -> dict[str, tuple[float, float]]:
    import django
    from django.conf import settings

    databases = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
    if pg:
        from psycopg.conninfo import conninfo_to_dict

        d = conninfo_to_dict(pg)
        databases["pg"] = {"ENGINE": "django.db.backends.postgresql", "NAME": d.get("dbname", "postgres"),
                           "HOST": d.get("host", ""), "PORT": d.get("port", ""), "USER": d.get("user", "")}
    settings.configure(DATABASES=databases)
    django.setup()
    from django.db import connections, models

    from libsnowflake.django import SnowflakeField

    class DSnow(models.Model):
        id = SnowflakeField(primary_key=True, generator=IDS)
        item = models.CharField(max_length=40)

        class Meta:
            app_label = "bench"

    class DPlain(models.Model):
        id = models.BigAutoField(primary_key=True)
        item = models.CharField(max_length=40)

        class Meta:
            app_label = "bench"

    out = {}
    for alias in databases:
        with connections[alias].schema_editor() as editor:
            editor.create_model(DSnow)
            editor.create_model(DPlain)
        for how, n in (("create", rows // 5), ("bulk_create", rows)):
            def run(cls: Any) -> Callable[[], None]:
                if how == "create":
                    return lambda: [cls.objects.using(alias).create(item="x") for _ in range(n)] and None
                return lambda: cls.objects.using(alias).bulk_create([cls(item="x") for _ in range(n)]) and None
            out[f"Django {how}, {'SQLite' if alias == 'default' else 'PostgreSQL'}"] = (best(run(DPlain), n), best(run(DSnow), n))
        with connections[alias].schema_editor() as editor:
            editor.delete_model(DSnow)
            editor.delete_model(DPlain)
    return out


def pydantic_bench(rows: int) -> tuple[float, float]:
    from pydantic import BaseModel

    class Plain(BaseModel):
        id: int

    class Snow(BaseModel):
        id: SnowflakeId

    values = IDS.next_ids(rows)

    def run(cls: Any) -> Callable[[], None]:
        return lambda: [cls.model_validate_json(cls(id=v).model_dump_json()) for v in values] and None

    return best(run(Plain), rows), best(run(Snow), rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", help="a PostgreSQL connection string (libpq form)")
    ap.add_argument("--rows", type=int, default=5000)
    a = ap.parse_args()
    import psycopg
    import pydantic
    import django

    print(f"python {sys.version.split()[0]}, SQLAlchemy {sa.__version__}, Django {django.get_version()}, "
          f"pydantic {pydantic.VERSION}, psycopg {psycopg.__version__}; {a.rows} rows; us per row (best of 3)")
    rows = [("SQLAlchemy add_all, SQLite", sqlalchemy_bench(sa.create_engine("sqlite://"), a.rows))]
    if a.pg:
        engine = sa.create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(a.pg))
        rows.append(("SQLAlchemy add_all, PostgreSQL", sqlalchemy_bench(engine, a.rows)))
        engine.dispose()
    rows += list(django_bench(a.pg, a.rows).items())
    rows.append(("pydantic validate + dump JSON", pydantic_bench(a.rows)))
    print(f"{'':34} {'plain':>8} {'snowflake':>10} {'cost':>8}")
    for name, (plain, snow) in rows:
        print(f"{name:34} {plain:8.2f} {snow:10.2f} {snow - plain:+8.2f}")


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "1")
    main()
