"""SnowflakeField through Django itself: save(), create(), bulk_create(), queries, foreign
keys, and what the generator and the environment decide."""

import os
import time

from django.db import connection
from django.test import TestCase

from libsnowflake import Layout, ValueRangeError

from .models import Event, Order, ids

TWITTER = Layout("twitter")


class SnowflakeFieldTests(TestCase):
    def test_save_sets_the_key_from_the_environments_generator(self) -> None:
        before = int(time.time() * 1000)
        order = Order(item="tea")
        self.assertIsNone(order.pk)
        order.save()
        self.assertIsInstance(order.pk, int)
        parts = TWITTER.decode(order.pk)
        # SNOWFLAKE_NODE, set by the test that runs this runner.
        self.assertEqual(parts.fields, {"datacenter": int(os.environ["EXPECT_DATACENTER"]), "worker": int(os.environ["EXPECT_WORKER"])})
        self.assertGreaterEqual(parts.unix_ms, before - 1)
        self.assertEqual(Order.objects.get(pk=order.pk).item, "tea")

    def test_create_and_bulk_create_issue_increasing_keys(self) -> None:
        first = Order.objects.create(item="a")
        rows = Order.objects.bulk_create([Order(item=str(i)) for i in range(500)])
        keys = [first.pk] + [r.pk for r in rows]
        self.assertTrue(all(isinstance(k, int) for k in keys))
        self.assertEqual(keys, sorted(set(keys)))
        self.assertEqual(list(Order.objects.order_by("pk").values_list("pk", flat=True)), keys)

    def test_named_generator_and_a_second_column(self) -> None:
        order = Order.objects.create(item="b")
        event = Event.objects.create(order=order)
        self.assertEqual(TWITTER.decode(event.pk).fields, {"datacenter": 2, "worker": 9})
        self.assertEqual(TWITTER.decode(event.ref).fields, {"datacenter": 2, "worker": 9})
        self.assertGreater(event.ref, event.pk)
        self.assertEqual(Event.objects.select_related("order").get(pk=event.pk).order.item, "b")
        # A value given is kept.
        given = ids.next_id()
        self.assertEqual(Event.objects.create(id=given, order=order).pk, given)

    def test_range_queries_by_time(self) -> None:
        start = int(time.time() * 1000)
        # An ID's time may lag the wall clock by one tick (the cached clock): from start - 1.
        made = [Order.objects.create(item=str(i)).pk for i in range(20)]
        lo, hi = TWITTER.min_id(start - 1), TWITTER.max_id(int(time.time() * 1000))
        found = list(Order.objects.filter(pk__range=(lo, hi)).order_by("pk").values_list("pk", flat=True))
        self.assertEqual(found, made)

    def test_ids_above_bigint_are_refused(self) -> None:
        with self.assertRaises(ValueRangeError):
            Order.objects.create(id=1 << 63, item="too big")

    def test_column_is_bigint(self) -> None:
        self.assertEqual(Order._meta.get_field("id").db_type(connection), "bigint")
