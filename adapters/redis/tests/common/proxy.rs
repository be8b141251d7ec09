//! A Unix-socket relay between the client and the server that can stall the connections
//! open at one moment: what they send is held back (the server sees nothing) until
//! `release`, which delivers it all, even after the client gave up and closed. So a
//! command can be made to land after later commands sent on fresh connections, as on a
//! network that stalls one path.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One relayed connection's client-to-server side.
#[derive(Default)]
struct Upstream {
    /// Bytes held back while stalled.
    held: Vec<u8>,
    stalled: bool,
    /// The client closed while stalled: close the server side after the release.
    closed: bool,
}

struct Link {
    server: UnixStream,
    up: Mutex<Upstream>,
}

pub struct Proxy {
    pub sock: PathBuf,
    links: Arc<Mutex<Vec<Arc<Link>>>>,
}

impl Proxy {
    /// Listens on `dir/proxy.sock` and relays every connection to the server at `to`.
    pub fn start(dir: &Path, to: &Path) -> Proxy {
        let sock = dir.join("proxy.sock");
        let _ = std::fs::remove_file(&sock);
        let listener = UnixListener::bind(&sock).expect("bind proxy");
        let links: Arc<Mutex<Vec<Arc<Link>>>> = Arc::default();
        let to = to.to_path_buf();
        let all = Arc::clone(&links);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                let Ok(server) = UnixStream::connect(&to) else {
                    continue;
                };
                let link = Arc::new(Link {
                    server,
                    up: Mutex::default(),
                });
                all.lock().unwrap().push(Arc::clone(&link));
                relay(client, link);
            }
        });
        Proxy { sock, links }
    }

    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.sock.display())
    }

    pub fn client(&self) -> redis::Client {
        redis::Client::open(self.url()).expect("client")
    }

    /// Holds back what the connections open now send from here on; later connections
    /// pass freely.
    pub fn stall(&self) {
        for link in self.links.lock().unwrap().iter() {
            link.up.lock().unwrap().stalled = true;
        }
    }

    /// Delivers everything held back, and lets the stalled connections flow again.
    pub fn release(&self) {
        for link in self.links.lock().unwrap().iter() {
            let mut up = link.up.lock().unwrap();
            if !up.held.is_empty() {
                (&link.server).write_all(&up.held).ok();
                up.held.clear();
            }
            up.stalled = false;
            if up.closed {
                link.server.shutdown(Shutdown::Write).ok();
            }
        }
    }
}

fn relay(client: UnixStream, link: Arc<Link>) {
    let mut from_client = client.try_clone().expect("clone");
    let up = Arc::clone(&link);
    std::thread::spawn(move || {
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = from_client.read(&mut buf).unwrap_or(0);
            let mut state = up.up.lock().unwrap();
            if n == 0 {
                if state.stalled {
                    state.closed = true;
                } else {
                    up.server.shutdown(Shutdown::Write).ok();
                }
                return;
            }
            if state.stalled {
                state.held.extend_from_slice(&buf[..n]);
            } else if (&up.server).write_all(&buf[..n]).is_err() {
                return;
            }
        }
    });
    let mut to_client = client;
    let mut from_server = link.server.try_clone().expect("clone");
    std::thread::spawn(move || {
        let mut buf = [0u8; 64 * 1024];
        loop {
            match from_server.read(&mut buf) {
                Ok(0) | Err(_) => {
                    to_client.shutdown(Shutdown::Both).ok();
                    return;
                }
                Ok(n) => {
                    if to_client.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            }
        }
    });
}
