"""A warehouse in object storage: where it is (`ObjectStoreLocation`, parsed from an `s3://` URI)
and the file operations the write-once protocol of docs/storage.md needs (`ObjectStoreFiles`),
over pyarrow's S3 file system (no extra jars, no extension downloaded at run time).

Object stores have no rename, no fsync and no atomic "create if absent" of a folder; what they have
is an object that exists completely or not at all once its upload is complete. So a data file is
written once, under its final unique name, and the upload's completion is the write's durability;
only the catalog commit that names it makes it visible. An upload cut short (a killed worker) leaves
no object, only an incomplete upload the store keeps until it is aborted (docs/storage.md).

Where the store is comes from the URI and the usual places, in this order: the URI's query
(`?endpoint_override=host:port&scheme=http&region=...`, as pyarrow's own URIs), then the AWS SDK's
environment variables (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, `AWS_REGION`,
`AWS_DEFAULT_REGION`). Credentials are the AWS SDK's chain: `AWS_ACCESS_KEY_ID` and
`AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`), `AWS_PROFILE` and `~/.aws`, the instance's role.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from alterflow.errors import UserError

S3_SCHEMES = ("s3", "s3a")  # s3a:// is Hadoop's name for the same store: the same bucket and keys
QUERY_OPTIONS = ("endpoint_override", "scheme", "region")
KEY_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")  # the first one set wins (the AWS SDK's order)
SINGLE_COPY_BYTES = 5 << 30  # the largest object one CopyObject may copy (S3's limit); larger ones go in parts
COPY_PART_BYTES = 512 << 20  # a part of such a copy (UploadPartCopy): 10,000 parts reach 5 TiB, S3's largest object
# Bucket names as S3 allows them (docs.aws.amazon.com, "Bucket naming rules"): 3 to 63 lowercase
# letters, digits, dots and hyphens, starting and ending with a letter or digit.
BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


class ObjectStoreError(UserError):
    """A warehouse URI that names no usable bucket: malformed, a bucket that does not exist,
    credentials the store refuses, an endpoint that does not answer. One line; nothing written."""


@dataclass(frozen=True)
class ObjectStoreLocation:
    """A warehouse in an S3-protocol store: a bucket and a key prefix, and how to reach it."""

    bucket: str
    prefix: str = ""  # without a leading or trailing slash; "" for the bucket's top
    endpoint: str | None = None  # host:port of a store that is not AWS (MinIO, Ceph, moto)
    endpoint_scheme: str = "https"
    region: str | None = None
    # The AWS key variables of the environment the URI was read in (`parse_object_store_uri`):
    # they travel with the location when it is pickled into a Spark task, so a worker reaches the
    # store with the driver's keys (as Iceberg's FileIO properties travel with its tasks); empty
    # with a profile or a role, where each process uses its own chain. Never shown, never compared.
    # Both the key id and the secret when set (`parse_object_store_uri` refuses half a pair).
    keys: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)

    @property
    def uri(self) -> str:
        """The location as a user writes it (without the endpoint, which is not part of a name)."""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def __str__(self) -> str:
        return self.uri

    @property
    def setting(self) -> str:
        """The URI with the endpoint and region in its query: what another process's
        ALTERFLOW_WAREHOUSE is set to so that it reaches the same store whatever its AWS variables."""
        options = {"endpoint_override": self.endpoint, "scheme": self.endpoint_scheme if self.endpoint else None, "region": self.region}
        query = urllib.parse.urlencode({k: v for k, v in options.items() if v})
        return f"s3://{self.bucket}/{urllib.parse.quote(self.prefix)}".rstrip("/") + (f"?{query}" if query else "")

    def key(self, relative: str) -> str:
        """pyarrow's path of a catalog path: `bucket/prefix/relative`, refusing anything that
        would leave the prefix."""
        parts = relative.split("/")
        if not relative or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"path {relative!r} is outside the warehouse")
        return "/".join(p for p in (self.bucket, self.prefix, relative) if p)

    @property
    def root(self) -> str:
        """pyarrow's path of the warehouse's top: `bucket/prefix`."""
        return "/".join(p for p in (self.bucket, self.prefix) if p)

    def environment(self) -> dict[str, str]:
        """What a process this one starts (a Spark task's Python worker, a `spark-submit`) needs
        in its environment to reach the same store: the endpoint and region as the AWS SDK's
        variables (credentials it takes from its own environment)."""
        env = {}
        if self.endpoint:
            env["AWS_ENDPOINT_URL"] = f"{self.endpoint_scheme}://{self.endpoint}"
        if self.region:
            env["AWS_REGION"] = self.region
        return env

    def __getstate__(self) -> dict:
        """Pickled (to a Spark task's Python worker) without the file system and client it made:
        the worker makes its own."""
        return {k: v for k, v in self.__dict__.items() if k not in ("filesystem", "client")}

    @cached_property
    def filesystem(self):
        """The pyarrow S3 file system of this location (made once per location object)."""
        from pyarrow import fs

        options = {"scheme": self.endpoint_scheme, "region": self.region, "endpoint_override": self.endpoint}
        keys = dict(self.keys)
        if keys:
            options.update(
                access_key=keys["AWS_ACCESS_KEY_ID"],
                secret_key=keys["AWS_SECRET_ACCESS_KEY"],
                session_token=keys.get("AWS_SESSION_TOKEN"),
            )
        return fs.S3FileSystem(**{k: v for k, v in options.items() if v is not None})

    @cached_property
    def client(self):
        """boto3's S3 client of this location (the `[s3]` extra): the owner marker's conditional
        writes, and the incomplete uploads a killed writer left; ImportError without boto3."""
        import boto3

        endpoint = f"{self.endpoint_scheme}://{self.endpoint}" if self.endpoint else None
        keys = dict(self.keys)
        credentials = (
            {
                "aws_access_key_id": keys["AWS_ACCESS_KEY_ID"],
                "aws_secret_access_key": keys["AWS_SECRET_ACCESS_KEY"],
                "aws_session_token": keys.get("AWS_SESSION_TOKEN"),
            }
            if keys
            else {}
        )
        return boto3.client("s3", endpoint_url=endpoint, region_name=self.region, **credentials)


def _endpoint(url: str, what: str, value: str) -> tuple[str, str]:
    """(host:port, scheme) of an endpoint URL (`http://127.0.0.1:9000`) or a bare `host:port`."""
    parts = urllib.parse.urlsplit(url if "://" in url else f"https://{url}")
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/") or parts.query:
        raise ObjectStoreError(f"{what} {value!r}: the endpoint {url!r} is not a URL such as http://127.0.0.1:9000")
    try:
        parts.port  # noqa: B018 -- raises on a port out of range
    except ValueError:
        raise ObjectStoreError(f"{what} {value!r}: the endpoint {url!r} has no valid port") from None
    return parts.netloc, parts.scheme


def parse_object_store_uri(text: str, what: str, env: Mapping[str, str]) -> ObjectStoreLocation:
    """The location an `s3://bucket/prefix` URI names (`what`: the setting, as the error line
    names it), the endpoint and region from its query or else `env`'s AWS variables.
    ObjectStoreError, one line, for a bucket name S3 does not allow, a prefix with empty, `.` or
    `..` parts, an unknown query option or a malformed endpoint."""
    parts = urllib.parse.urlsplit(text.strip())
    scheme = parts.scheme.lower()
    if scheme not in S3_SCHEMES:
        raise ObjectStoreError(f"{what} {text!r} is not an s3:// URI")
    if parts.fragment or parts.username or parts.password or parts.port is not None:
        raise ObjectStoreError(f"{what} {text!r}: an s3:// URI is s3://bucket/prefix (credentials come from the AWS variables)")
    bucket = parts.hostname or ""
    if not BUCKET_NAME.fullmatch(bucket) or ".." in bucket or parts.netloc != bucket:
        raise ObjectStoreError(
            f"{what} {text!r}: {parts.netloc!r} is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens)"
        )
    prefix = urllib.parse.unquote(parts.path).strip("/")
    if prefix and any(p in ("", ".", "..") for p in prefix.split("/")):
        raise ObjectStoreError(f"{what} {text!r}: the prefix {prefix!r} has an empty, '.' or '..' part")
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - set(QUERY_OPTIONS))
    if unknown:
        raise ObjectStoreError(f"{what} {text!r}: unknown option {unknown[0]!r} (known: {', '.join(QUERY_OPTIONS)})")
    endpoint, endpoint_scheme = None, query.get("scheme") or "https"
    url = query.get("endpoint_override") or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if url:
        endpoint, found_scheme = _endpoint(url, what, text)
        if "://" in url and not query.get("scheme"):
            endpoint_scheme = found_scheme
    if endpoint_scheme not in ("http", "https"):
        raise ObjectStoreError(f"{what} {text!r}: scheme must be http or https, not {endpoint_scheme!r}")
    region = query.get("region") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
    keys = tuple((name, env[name]) for name in KEY_VARIABLES if env.get(name))
    named = {name for name, _ in keys}
    if named and not {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= named:
        missing = "AWS_SECRET_ACCESS_KEY" if "AWS_ACCESS_KEY_ID" in named else "AWS_ACCESS_KEY_ID"
        raise ObjectStoreError(
            f"{what} {text!r}: {', '.join(sorted(named))} is set without {missing} (set both, or neither to use a profile or role)"
        )
    return ObjectStoreLocation(bucket, prefix, endpoint, endpoint_scheme, region, keys)


def _store_failure(location: ObjectStoreLocation, what: str, exc: OSError) -> ObjectStoreError:
    """One line for what the store (or the way to it) said."""
    said = str(exc)
    where = f"the endpoint {location.endpoint}" if location.endpoint else "S3"
    if "NETWORK_CONNECTION" in said or "curlCode" in said:
        return ObjectStoreError(f"{what} {location.uri}: {where} does not answer (check the endpoint and the network)")
    if any(code in said for code in ("ACCESS_DENIED", "InvalidAccessKeyId", "SignatureDoesNotMatch", "Forbidden", "403")):
        return ObjectStoreError(
            f"{what} {location.uri}: {where} refused the credentials (check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_PROFILE)"
        )
    first = said.splitlines()[0] if said else type(exc).__name__
    return ObjectStoreError(f"{what} {location.uri}: {where} failed: {first}")


_REACHED: set[ObjectStoreLocation] = set()  # checked once per process: a task, a page request, a command


def check_reachable(location: ObjectStoreLocation, what: str) -> None:
    """Refuse (ObjectStoreError, one line naming `what`) a bucket that does not exist, credentials
    the store refuses and an endpoint that does not answer; read only, nothing written. A location
    that passed once in this process is not asked again (a store that fails later fails the
    operation that meets it, in its own line)."""
    from pyarrow import fs

    if location in _REACHED:
        return

    try:
        found = location.filesystem.get_file_info(location.bucket)
        if found.type == fs.FileType.NotFound:
            raise ObjectStoreError(f"{what} {location.uri}: the bucket {location.bucket!r} does not exist")
        # Listing proves the credentials: a bucket's HEAD may answer without them.
        location.filesystem.get_file_info(fs.FileSelector(location.root, recursive=False, allow_not_found=True))
    except OSError as exc:
        raise _store_failure(location, what, exc) from None
    _REACHED.add(location)


@dataclass(frozen=True)
class StoredObject:
    """An object under the warehouse, as listed: its catalog path, size and upload time (UTC)."""

    path: str
    size: int
    modified: datetime


class ObjectStoreFiles:
    """The file operations of a warehouse in object storage, by catalog path (relative to the
    warehouse's prefix). Writes are write-once: an object exists only once its upload completed."""

    def __init__(self, location: ObjectStoreLocation):
        self.location = location

    @property
    def filesystem(self):
        return self.location.filesystem

    def open_output(self, relative: str):
        """A stream whose close completes the upload (the object appears then, all at once). Its
        close completes the upload whatever happened before, an exception's unwinding included:
        only a killed process leaves no object. Uploads go in parts in the background."""
        return self.filesystem.open_output_stream(self.location.key(relative), metadata={})

    def write_bytes(self, relative: str, data: bytes) -> int:
        with self.open_output(relative) as out:
            out.write(data)
        return len(data)

    def open_input(self, relative: str):
        """A random-access file (Parquet readers seek to the footer first); FileNotFoundError
        when there is no such object."""
        return self.filesystem.open_input_file(self.location.key(relative))

    def read_bytes(self, relative: str) -> bytes:
        with self.open_input(relative) as stream:
            return stream.read()

    def size(self, relative: str) -> int | None:
        """The object's size, None when there is none."""
        from pyarrow import fs

        found = self.filesystem.get_file_info(self.location.key(relative))
        return found.size if found.type == fs.FileType.File else None

    def list(self, relative_folder: str = "") -> Iterator[StoredObject]:
        """Every object under a folder of the warehouse (all depths), in key order. The store's
        folder markers (`name/` objects some writers leave) are not objects of the warehouse."""
        from pyarrow import fs

        base = self.location.key(relative_folder) if relative_folder else self.location.root
        start = len(self.location.root) + 1 if self.location.root else 0
        selector = fs.FileSelector(base, recursive=True, allow_not_found=True)
        found = [f for f in self.filesystem.get_file_info(selector) if f.type == fs.FileType.File]
        for info in sorted(found, key=lambda f: f.path):
            # A store that gives no time: taken as written now, so it is never old enough to delete.
            modified = (info.mtime or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
            yield StoredObject(info.path[start:], info.size, modified)

    def move(self, source_key: str, target_key: str) -> None:
        """Copy an object (pyarrow paths: `bucket/key`) to another key and delete the original:
        one CopyObject up to S3's 5 GiB, a multipart copy of parts beyond (boto3's managed copy,
        server side: no byte passes through this process)."""
        from pyarrow import fs

        found = self.filesystem.get_file_info(source_key)
        if found.type != fs.FileType.File:
            raise FileNotFoundError(f"no object {source_key}")
        if found.size <= SINGLE_COPY_BYTES:
            self.filesystem.move(source_key, target_key)
            return
        from boto3.s3.transfer import TransferConfig

        bucket, source = source_key.split("/", 1)
        target_bucket, target = target_key.split("/", 1)
        parts = TransferConfig(multipart_threshold=SINGLE_COPY_BYTES, multipart_chunksize=COPY_PART_BYTES)
        self.location.client.copy({"Bucket": bucket, "Key": source}, target_bucket, target, Config=parts)
        self.filesystem.delete_file(source_key)

    def delete(self, relatives: Iterable[str]) -> int:
        """Delete objects by catalog path, a thousand per request (S3's DeleteObjects, through
        boto3: pyarrow's delete asks for each object first and leaves a folder marker where a
        "folder" empties); returns how many existed. A missing one is skipped: a sweep that
        crashed after some deletes repeats them."""
        relatives = list(relatives)
        keys = {relative: self.location.key(relative).split("/", 1)[1] for relative in relatives}  # all checked first
        existing = [keys[relative] for relative in relatives if self.size(relative) is not None]
        client = self.location.client
        for start in range(0, len(existing), 1000):
            batch = existing[start : start + 1000]
            reply = client.delete_objects(Bucket=self.location.bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True})
            if reply.get("Errors"):
                error = reply["Errors"][0]
                raise OSError(f"deleting s3://{self.location.bucket}/{error['Key']} failed: {error.get('Code')} {error.get('Message', '')}")
        return len(existing)
