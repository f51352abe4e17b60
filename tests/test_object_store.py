"""alterflow.object_store against a real S3-protocol server (moto's, tests.support.s3_server):
the warehouse URI, the one-line refusals, write-once objects, and a writer killed mid-upload."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from alterflow.object_store import (
    ObjectStoreError,
    ObjectStoreFiles,
    ObjectStoreLocation,
    check_reachable,
    parse_object_store_uri,
)
from tests.support.ports import free_port

SETTING = "ALTERFLOW_WAREHOUSE"


@pytest.mark.parametrize(
    ("uri", "env", "expected"),
    [
        ("s3://bucket", {}, ObjectStoreLocation("bucket")),
        ("s3://bucket/", {}, ObjectStoreLocation("bucket")),
        ("s3://my.bucket-1/a/b/", {}, ObjectStoreLocation("my.bucket-1", "a/b")),
        ("S3A://bucket/wh", {}, ObjectStoreLocation("bucket", "wh")),
        ("s3://bucket/w%20h", {}, ObjectStoreLocation("bucket", "w h")),
        (
            "s3://bucket/wh?endpoint_override=127.0.0.1:9000&scheme=http&region=eu-west-1",
            {"AWS_ENDPOINT_URL": "https://elsewhere:1", "AWS_REGION": "us-east-2"},
            ObjectStoreLocation("bucket", "wh", "127.0.0.1:9000", "http", "eu-west-1"),
        ),
        ("s3://bucket/wh", {"AWS_ENDPOINT_URL": "http://minio:9000"}, ObjectStoreLocation("bucket", "wh", "minio:9000", "http")),
        (
            "s3://bucket/wh",
            {"AWS_ENDPOINT_URL": "http://other:1", "AWS_ENDPOINT_URL_S3": "https://s3.example:443", "AWS_DEFAULT_REGION": "ap-south-1"},
            ObjectStoreLocation("bucket", "wh", "s3.example:443", "https", "ap-south-1"),
        ),
    ],
)
def test_a_warehouse_uri_names_its_bucket_prefix_endpoint_and_region(uri, env, expected):
    assert parse_object_store_uri(uri, SETTING, env) == expected


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("s3://Bucket/wh", "'Bucket' is not a bucket name"),
        ("s3://ab/wh", "'ab' is not a bucket name"),
        ("s3://a..b/wh", "'a..b' is not a bucket name"),
        ("s3:///wh", "'' is not a bucket name"),
        ("s3://key:secret@bucket/wh", "credentials come from the AWS variables"),
        ("s3://bucket:9000/wh", "credentials come from the AWS variables"),
        ("s3://bucket/a//b", "has an empty, '.' or '..' part"),
        ("s3://bucket/a/../b", "has an empty, '.' or '..' part"),
        ("s3://bucket/wh?endpoint=x", "unknown option 'endpoint'"),
        ("s3://bucket/wh?scheme=ftp", "scheme must be http or https, not 'ftp'"),
        ("s3://bucket/wh?endpoint_override=ftp://x:1", "is not a URL such as http://127.0.0.1:9000"),
        ("s3://bucket/wh?endpoint_override=http://x:99999", "has no valid port"),
        ("gs://bucket/wh", "is not an s3:// URI"),
    ],
)
def test_a_malformed_warehouse_uri_is_one_line_naming_the_setting(uri, says):
    with pytest.raises(ObjectStoreError) as raised:
        parse_object_store_uri(uri, SETTING, {})
    message = str(raised.value)
    assert message.startswith(f"{SETTING} ") and says in message and "\n" not in message


def test_catalog_paths_stay_under_the_prefix():
    location = ObjectStoreLocation("bucket", "wh")
    assert location.key("t1/i1/b1/f.parquet") == "bucket/wh/t1/i1/b1/f.parquet"
    assert ObjectStoreLocation("bucket").key("t1/f") == "bucket/t1/f"
    for bad in ("", "/t1", "t1/../../x", "t1//f", "./t1"):
        with pytest.raises(ValueError, match="outside the warehouse"):
            location.key(bad)


def test_the_location_passes_its_endpoint_to_the_processes_it_starts():
    location = parse_object_store_uri("s3://bucket/wh?endpoint_override=127.0.0.1:9000&scheme=http&region=eu-west-1", SETTING, {})
    assert location.environment() == {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_REGION": "eu-west-1"}
    assert parse_object_store_uri(location.uri, SETTING, location.environment()) == location
    assert location.setting == "s3://bucket/wh?endpoint_override=127.0.0.1%3A9000&scheme=http&region=eu-west-1"
    assert parse_object_store_uri(location.setting, SETTING, {"AWS_ENDPOINT_URL": "http://elsewhere:1"}) == location
    spaced = ObjectStoreLocation("bucket", "w h")
    assert spaced.setting == "s3://bucket/w%20h" and parse_object_store_uri(spaced.setting, SETTING, {}) == spaced


def test_a_reachable_bucket_passes_the_check(s3_bucket):
    check_reachable(parse_object_store_uri(f"s3://{s3_bucket}/wh", SETTING, os.environ), SETTING)


def test_a_bucket_that_does_not_exist_is_one_line(s3_bucket):
    location = parse_object_store_uri("s3://no-such-bucket-here/wh", SETTING, os.environ)
    with pytest.raises(
        ObjectStoreError, match=r"^ALTERFLOW_WAREHOUSE s3://no-such-bucket-here/wh: the bucket 'no-such-bucket-here' does not exist$"
    ):
        check_reachable(location, SETTING)


def test_an_endpoint_that_does_not_answer_is_one_line(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "y")
    location = parse_object_store_uri(f"s3://bucket/wh?endpoint_override=127.0.0.1:{free_port()}&scheme=http&region=us-east-1", SETTING, {})
    with pytest.raises(ObjectStoreError, match=r"does not answer \(check the endpoint and the network\)$"):
        check_reachable(location, SETTING)


def test_credentials_the_store_refuses_are_one_line(tmp_path, monkeypatch):
    """moto's server with authentication on (INITIAL_NO_AUTH_ACTION_COUNT=0) knows no access key:
    every request is refused as AWS refuses an unknown one."""
    from tests.support.s3_server import S3Server

    monkeypatch.setenv("INITIAL_NO_AUTH_ACTION_COUNT", "0")
    server = S3Server(tmp_path / "moto.log").start()
    try:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        location = parse_object_store_uri("s3://bucket/wh", SETTING, os.environ)
        with pytest.raises(
            ObjectStoreError, match=r"refused the credentials \(check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_PROFILE\)$"
        ):
            check_reachable(location, SETTING)
    finally:
        server.stop()


def test_objects_are_written_once_read_listed_and_deleted(s3_bucket):
    files = ObjectStoreFiles(parse_object_store_uri(f"s3://{s3_bucket}/wh", SETTING, os.environ))
    table = pa.table({"id": pa.array(range(1000), pa.int64()), "name": [f"n{i}" for i in range(1000)]})
    with files.open_output("t1/i1/b1/1-a.parquet") as out:
        pq.write_table(table, out)
    assert files.write_bytes("t1/i1/b2/2-b.parquet", b"x" * 10) == 10
    assert pq.read_table(files.open_input("t1/i1/b1/1-a.parquet")).equals(table)
    listed = list(files.list())
    assert [o.path for o in listed] == ["t1/i1/b1/1-a.parquet", "t1/i1/b2/2-b.parquet"]
    assert listed[1].size == 10 and files.size("t1/i1/b1/1-a.parquet") == listed[0].size
    assert [o.path for o in files.list("t1/i1/b2")] == ["t1/i1/b2/2-b.parquet"]
    assert files.size("t1/i1/b9/none.parquet") is None
    with pytest.raises(FileNotFoundError):
        files.open_input("t1/i1/b9/none.parquet")
    assert files.delete(["t1/i1/b1/1-a.parquet", "t1/i1/b9/none.parquet"]) == 1
    assert [o.path for o in files.list()] == ["t1/i1/b2/2-b.parquet"]
    assert list(files.list("t9")) == []


def test_folder_markers_other_writers_leave_are_not_objects_of_the_warehouse(s3_bucket, s3_server):
    s3_server.filesystem().create_dir(f"{s3_bucket}/wh/t1/i1")  # pyarrow writes "wh/t1/i1/" marker objects
    files = ObjectStoreFiles(parse_object_store_uri(f"s3://{s3_bucket}/wh", SETTING, os.environ))
    files.write_bytes("t1/i1/b1/f", b"1")
    assert [o.path for o in files.list()] == ["t1/i1/b1/f"]


WRITER = """
import os, sys, time
from alterflow.object_store import ObjectStoreFiles, parse_object_store_uri
files = ObjectStoreFiles(parse_object_store_uri(sys.argv[1], "ALTERFLOW_WAREHOUSE", os.environ))
with files.open_output("t1/i1/b1/1-killed.parquet") as out:
    chunk = b"x" * (1 << 20)
    for i in range(12):  # 12 MiB: two parts of pyarrow's 10 MiB upload before the kill
        out.write(chunk)
    out.flush()
    print("written", flush=True)
    time.sleep(60)
"""


def test_a_writer_killed_mid_upload_leaves_no_object_only_an_incomplete_upload(s3_bucket, s3_server):
    """kill -9 before the upload completes: the object never appears (nothing half-written is ever
    read); the store keeps the parts as an incomplete upload until someone aborts it."""
    import boto3

    uri = f"s3://{s3_bucket}/wh"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, uri], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        assert writer.stdout.readline().strip() == "written"
        client = boto3.client("s3", endpoint_url=s3_server.endpoint)
        deadline = time.monotonic() + 30
        while not client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads"):
            assert time.monotonic() < deadline, "the writer never began its upload"
            time.sleep(0.05)
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(10)
    finally:
        writer.kill()
        writer.wait()
    files = ObjectStoreFiles(parse_object_store_uri(uri, SETTING, os.environ))
    assert list(files.list()) == [] and files.size("t1/i1/b1/1-killed.parquet") is None
    uploads = client.list_multipart_uploads(Bucket=s3_bucket)["Uploads"]
    assert [u["Key"] for u in uploads] == ["wh/t1/i1/b1/1-killed.parquet"]
    for upload in uploads:
        client.abort_multipart_upload(Bucket=s3_bucket, Key=upload["Key"], UploadId=upload["UploadId"])


def test_a_pickled_location_travels_without_its_file_system_and_with_the_keys_it_was_read_with():
    """What a Spark task's worker gets: the location (equal to the driver's), none of the objects
    the driver made for it, and the AWS key variables of the environment its URI was read in,
    which its file system then uses; the keys are never shown."""
    import pickle

    env = {"AWS_ACCESS_KEY_ID": "driver-key", "AWS_SECRET_ACCESS_KEY": "driver-secret", "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    location = parse_object_store_uri("s3://bucket/wh", SETTING, env)
    assert dict(location.keys) == {"AWS_ACCESS_KEY_ID": "driver-key", "AWS_SECRET_ACCESS_KEY": "driver-secret"}
    assert (
        "driver" not in repr(location)
        and "driver" not in location.setting
        and location == ObjectStoreLocation("bucket", "wh", "127.0.0.1:9", "http")
    )
    location.filesystem  # noqa: B018 -- made, and cached on the object
    state = location.__getstate__()
    assert "filesystem" not in state and "client" not in state
    copy = pickle.loads(pickle.dumps(location))
    assert copy == location and copy.keys == location.keys and "filesystem" not in copy.__dict__
    assert parse_object_store_uri("s3://bucket/wh", SETTING, {}).keys == ()


@pytest.mark.parametrize("present", ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
def test_half_a_key_pair_is_one_line(present):
    with pytest.raises(ObjectStoreError, match=rf"^ALTERFLOW_WAREHOUSE 's3://bucket/wh': {present} is set without AWS_"):
        parse_object_store_uri("s3://bucket/wh", SETTING, {present: "x"})


def test_the_markers_and_deletes_client_uses_the_keys_the_location_carries(s3_bucket, monkeypatch):
    """boto3's client (marker, deletes, uploads) signs with the location's keys as pyarrow's file
    system does, not with whatever the process's environment holds later."""
    location = parse_object_store_uri(f"s3://{s3_bucket}/wh", SETTING, os.environ)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "someone-else")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    assert location.client._request_signer._credentials.access_key == dict(location.keys)["AWS_ACCESS_KEY_ID"]
    ObjectStoreFiles(location).write_bytes("k/one", b"1")
    assert ObjectStoreFiles(location).delete(["k/one"]) == 1


def test_an_object_past_one_copys_limit_is_moved_in_parts(s3_bucket, monkeypatch):
    """S3 copies at most 5 GiB in one CopyObject; past that the move copies in parts, server side.
    The limits are lowered here so that a few megabytes cross them."""
    import alterflow.object_store as object_store

    monkeypatch.setattr(object_store, "SINGLE_COPY_BYTES", 1 << 20)
    monkeypatch.setattr(object_store, "COPY_PART_BYTES", 5 << 20)  # S3's smallest part
    location = parse_object_store_uri(f"s3://{s3_bucket}/wh", SETTING, os.environ)
    files = ObjectStoreFiles(location)
    data = os.urandom(11 << 20)
    files.write_bytes("staging/big", data)
    files.write_bytes("staging/small", b"small")
    files.move(location.key("staging/big"), location.key("t1/big"))
    files.move(location.key("staging/small"), location.key("t1/small"))
    assert files.read_bytes("t1/big") == data and files.read_bytes("t1/small") == b"small"
    assert files.size("staging/big") is None and files.size("staging/small") is None
    with pytest.raises(FileNotFoundError):
        files.move(location.key("staging/big"), location.key("t1/again"))
