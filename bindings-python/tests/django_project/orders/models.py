from django.db import models

from libsnowflake import Generator
from libsnowflake.django import SnowflakeField

# The generator named in code: twitter, node values of this test.
ids = Generator("twitter", node={"datacenter": 2, "worker": 9})


class Order(models.Model):
    """A Snowflake primary key from the process's generator (the environment's configuration)."""

    id = SnowflakeField(primary_key=True)
    item = models.CharField(max_length=40)


class Event(models.Model):
    """A Snowflake primary key from a named generator, and a second Snowflake column."""

    id = SnowflakeField(primary_key=True, generator=ids)
    order = models.ForeignKey(Order, on_delete=models.CASCADE)
    ref = SnowflakeField(generator=lambda: ids, null=True)


class Plain(models.Model):
    """The plain column the benchmark compares with: an autoincrement BIGINT key."""

    id = models.BigAutoField(primary_key=True)
    item = models.CharField(max_length=40)
