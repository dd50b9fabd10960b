// The installer's own client, as closely as Java allows: it trusts only the CA
// certificates given (like the installer's store), verifies the host name
// strictly (HttpsURLConnection's default verifier), and sends HEAD then GET of
// the catalog with Basic credentials.
// Run: java DepotProbe.java <user> <password> [<ca.pem> <url> ...]
// Each (trust, url) pair is one probe, its lines ended by "--"; without pairs,
// each line of stdin is one, "<ca.pem>\t<url>". One JVM serves many probes, as
// its start-up (and the source launcher's compilation) costs more than they do.
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URL;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Base64;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public class DepotProbe {
  public static void main(String[] args) throws Exception {
    for (int i = 2; i + 1 < args.length; i += 2) {
      probe(args[i], args[i + 1], args[0], args[1]);
      System.out.println("--");
    }
    if (args.length > 2) return;
    BufferedReader lines = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
      String[] pair = line.split("\t", 2);
      probe(pair[0], pair[1], args[0], args[1]);
      System.out.println("--");
      System.out.flush();
    }
  }

  static void probe(String trust, String url, String user, String password) throws Exception {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    try (InputStream in = new FileInputStream(trust)) {
      int i = 0;
      for (Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) store.setCertificateEntry("ca" + i++, cert);
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    URL catalog = new URL(url + "/PROD/metadata/productVersionCatalog/v1/productVersionCatalog.json");
    String credentials = Base64.getEncoder().encodeToString((user + ":" + password).getBytes("UTF-8"));
    for (String method : new String[] {"HEAD", "GET"}) {
      HttpsURLConnection c = (HttpsURLConnection) catalog.openConnection();
      c.setSSLSocketFactory(context.getSocketFactory());
      c.setRequestMethod(method);
      c.setRequestProperty("Authorization", "Basic " + credentials);
      try {
        int status = c.getResponseCode();
        long length = c.getContentLengthLong();
        if (method.equals("GET") && status == 200) try (InputStream body = c.getInputStream()) { length = body.readAllBytes().length; }
        System.out.println(method + " " + status + " " + length);
      } catch (javax.net.ssl.SSLException e) {
        System.out.println(method + " TLS-ERROR " + e.getMessage());
        return;
      } catch (java.io.IOException e) {
        System.out.println(method + " ERROR " + e);
        return;
      }
    }
  }
}
