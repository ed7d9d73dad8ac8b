//! One Kafka-protocol connection for the load generator: a request out, its response back,
//! encoded and decoded with ferrokraft's codec (the bytes any Kafka client sends), with a
//! deadline on each call so that a dead or paused controller is an error, not a hang.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::codec::request::encode_request;
use ferrokraft::codec::response::decode_response;
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_protocol::protocol::StrBytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest response the generator accepts (a CreateTopics answer for thousands of
/// topics is well under this).
const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// One connection; one request in flight at a time, as a Kafka broker's channel to its
/// controller.
pub struct Conn {
    /// The port it is connected to.
    pub port: u16,
    stream: TcpStream,
    correlation_id: i32,
    client_id: String,
}

impl Conn {
    /// Connects to 127.0.0.1:`port`.
    pub async fn connect(port: u16, client_id: &str, timeout: Duration) -> io::Result<Conn> {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
        stream.set_nodelay(true)?;
        Ok(Conn {
            port,
            stream,
            correlation_id: 0,
            client_id: client_id.to_string(),
        })
    }

    /// Sends `body` at `version` and waits up to `timeout` for its response.
    pub async fn call(
        &mut self,
        body: RequestBody,
        version: i16,
        timeout: Duration,
    ) -> io::Result<ResponseBody> {
        match tokio::time::timeout(timeout, self.round_trip(body, version)).await {
            Ok(r) => r,
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no response in time",
            )),
        }
    }

    /// ApiVersions (v3): the versions the node supports.
    pub async fn api_versions(&mut self, timeout: Duration) -> io::Result<ApiVersionsResponse> {
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("ferrokraft-bench"))
            .with_client_software_version(StrBytes::from_static_str("0"));
        match self
            .call(RequestBody::ApiVersions(request), 3, timeout)
            .await?
        {
            ResponseBody::ApiVersions(r) if r.error_code == 0 => Ok(r),
            other => Err(io::Error::other(format!("ApiVersions: {other:?}"))),
        }
    }

    async fn round_trip(&mut self, body: RequestBody, version: i16) -> io::Result<ResponseBody> {
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let api_key = body.api_key();
        let frame = encode_request(&body, version, self.correlation_id, &self.client_id)
            .map_err(io::Error::other)?;
        self.stream.write_all(&frame).await?;
        let len = self.stream.read_u32().await? as usize;
        if len > MAX_RESPONSE_BYTES {
            return Err(io::Error::other(format!("a response of {len} bytes")));
        }
        let mut buf = vec![0u8; len];
        self.stream.read_exact(&mut buf).await?;
        let (correlation_id, body) =
            decode_response(Bytes::from(buf), api_key, version).map_err(io::Error::other)?;
        if correlation_id != self.correlation_id {
            return Err(io::Error::other(format!(
                "correlation id {correlation_id}, expected {}",
                self.correlation_id
            )));
        }
        Ok(body)
    }
}
