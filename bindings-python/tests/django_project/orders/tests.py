"""SnowflakeField through Django itself: save(), create(), bulk_create(), queries, foreign
keys, and what the generator and the environment decide."""

import json
import os
import time
from pathlib import Path

from django.contrib.auth.models import User
from django.core import serializers
from django.db import connection
from django.forms.models import model_to_dict
from django.http import JsonResponse
from django.test import TestCase

from libsnowflake import Layout, ValueRangeError
from libsnowflake.django import SnowflakeField, SnowflakeJSONEncoder

from .models import Event, Order, ids

TWITTER = Layout("twitter")


class SnowflakeFieldTests(TestCase):
    def test_save_sets_the_key_from_the_environments_generator(self) -> None:
        # An ID of the field's generator just before: the key is issued after it. (Not the
        # wall clock: the library's cached reading lags it while its ticker is starved, by 5 ms
        # in one CI run, and a key is no less new for that.)
        earlier = Order._meta.pk.generator().next_id()
        order = Order(item="tea")
        self.assertIsNone(order.pk)
        order.save()
        after = int(time.time() * 1000)
        self.assertIsInstance(order.pk, int)
        parts = TWITTER.decode(order.pk)
        # SNOWFLAKE_NODE, set by the test that runs this runner.
        self.assertEqual(parts.fields, {"datacenter": int(os.environ["EXPECT_DATACENTER"]), "worker": int(os.environ["EXPECT_WORKER"])})
        self.assertGreater(order.pk, earlier)
        self.assertLessEqual(parts.unix_ms, after + 1)
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
        # An ID's time may lag the wall clock by one tick (the cached clock), and lead it by the
        # anchor's rounding plus the wall clock's drift since the shared clock was anchored:
        # a second either side (the test's database holds no other rows).
        made = [Order.objects.create(item=str(i)).pk for i in range(20)]
        lo, hi = TWITTER.min_id(start - 1000), TWITTER.max_id(int(time.time() * 1000) + 1000)
        found = list(Order.objects.filter(pk__range=(lo, hi)).order_by("pk").values_list("pk", flat=True))
        self.assertEqual(found, made)

    def test_ids_above_bigint_are_refused(self) -> None:
        with self.assertRaises(ValueRangeError):
            Order.objects.create(id=1 << 63, item="too big")

    def test_column_is_bigint(self) -> None:
        self.assertEqual(Order._meta.get_field("id").db_type(connection), "bigint")


class Issue40Tests(TestCase):
    def test_the_admin_add_form_needs_no_id(self) -> None:
        # A primary key the library fills is not an input: the admin's add form leaves it out.
        self.client.force_login(User.objects.create_superuser("admin", "admin@example.com", "pw"))
        form = self.client.get("/admin/orders/order/add/")
        self.assertEqual(form.status_code, 200)
        self.assertNotIn('name="id"', form.content.decode())
        self.assertIn('name="item"', form.content.decode())
        saved = self.client.post("/admin/orders/order/add/", {"item": "from the admin"})
        self.assertEqual(saved.status_code, 302, saved.content.decode()[:2000])
        order = Order.objects.get(item="from the admin")
        self.assertEqual(TWITTER.decode(order.pk).fields["worker"], int(os.environ["EXPECT_WORKER"]))
        # A form field where the code asks for one, or the field is no primary key.
        self.assertIsNone(Order._meta.get_field("id").formfield())
        self.assertIsNotNone(SnowflakeField(primary_key=True, editable=True).formfield())
        self.assertIsNotNone(SnowflakeField(null=True).formfield())

    def test_json_that_javascript_reads_whole(self) -> None:
        order = Order.objects.create(item="tea")
        self.assertGreater(order.pk, (1 << 53) - 1)
        body = json.loads(JsonResponse(model_to_dict(order), encoder=SnowflakeJSONEncoder).content)
        self.assertEqual(body, {"id": str(order.pk), "item": "tea"})
        dumped = json.loads(serializers.serialize("json", Order.objects.filter(pk=order.pk), cls=SnowflakeJSONEncoder))
        self.assertEqual(dumped[0]["pk"], str(order.pk))
        # Small integers, booleans and the rest stay as they are.
        text = json.dumps({"n": 5, "b": True, "big": [1 << 60], "neg": -(1 << 60)}, cls=SnowflakeJSONEncoder)
        self.assertEqual(json.loads(text), {"n": 5, "b": True, "big": [str(1 << 60)], "neg": str(-(1 << 60))})


class DrfTests(TestCase):
    def test_the_drf_field_agrees_with_every_languages_json_helpers(self) -> None:
        from rest_framework import serializers

        from libsnowflake.drf import SnowflakeIdField

        class OrderSerializer(serializers.ModelSerializer):
            id = SnowflakeIdField(read_only=True)

            class Meta:
                model = Order
                fields = ["id", "item"]

        class RefSerializer(serializers.Serializer):
            id = SnowflakeIdField()

        order = Order.objects.create(item="tea")
        self.assertEqual(OrderSerializer(order).data, {"id": str(order.pk), "item": "tea"})
        # tests/vectors/json_ids.json: what Node's parse() and pydantic's SnowflakeId accept.
        vectors = Path(os.environ.get("LIBSNOWFLAKE_VECTORS", Path(__file__).resolve().parents[4] / "tests" / "vectors"))
        cases = json.loads((vectors / "json_ids.json").read_text())
        for c in cases["parse"]:
            s = RefSerializer(data=json.loads('{"id": %s}' % c["json"]))
            self.assertEqual(s.is_valid(), c["id"] is not None, c["json"])
            if c["id"] is not None:
                self.assertEqual(s.validated_data["id"], int(c["id"]))
        for c in cases["stringify"]:
            s = RefSerializer(data={"id": int(c["id"])})
            self.assertEqual(s.is_valid(), c["json"] is not None, c["id"])
