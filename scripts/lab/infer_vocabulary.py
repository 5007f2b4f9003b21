"""The values and phrases the training generator (``lab.infer_training``) draws from (issue 35).

Written for the generator; none is taken from the hand-written evaluation dialogues.
"""

from __future__ import annotations


def phrases(text: str) -> list[str]:
    """The phrases of a "|"-separated literal, spaces normalised (line breaks are spaces)."""
    return [" ".join(p.split()) for p in text.split("|") if p.strip()]


NAMES = phrases(
    """Aiko|Bram|Chiara|Dmitri|Esme|Faisal|Greta|Hamid|Isla|Jonah|Keiko|Lars|Mireille|Nkechi|
Oren|Paula|Rashid|Saoirse|Teodor|Ulla|Vasco|Wiebke|Ximena|Yusuf|Zofia|Amadou|Beatriz|Callum|
Dalia|Emre|Fenna|Gideon|Hedda|Idris|Jurgen|Kalani|Leonie|Matteo|Nour|Olamide|Pilar|Quentin|
Rhiannon|Stellan|Tamsin|Ugne|Valentin|Wairimu|Xiang|Yelena|Zainab|Arjun|Brigid|Cosmin|Delphine|
Eamon|Freya|Gaspard|Hira|Ilse|Joaquin|Kwame|Lorna|Magnus|Nilufar|Orla|Pradeep|Renske|Sunniva|
Thiago|Ulrike|Vikram|Wendell|Yara|Zeynep|Alba|Bongani|Cyrus|Dunja|Elodie|Florin|Gulnara|Hector|
Ingrid|Jasper|Katya|Luca|Marisol|Niamh|Osvaldo|Petra|Radek|Selin|Tobias|Annika|Marcel|Sven"""
)
RELATIONS = phrases(
    """sister|brother|mum|dad|mother|father|son|daughter|husband|wife|partner|boyfriend|
girlfriend|cousin|aunt|uncle|grandma|grandpa|neighbour|flatmate|best friend|boss|colleague|
niece|nephew|stepdad|mother-in-law|twin"""
)
CITIES = phrases(
    """Utrecht|Gdansk|Valparaiso|Nagoya|Winnipeg|Hobart|Tampere|Lyon|Brno|Ljubljana|Aarhus|
Halifax|Cusco|Mombasa|Chiang Mai|Trieste|Galway|Aberdeen|Malmo|Sapporo|Busan|Ghent|Zaragoza|
Bologna|Antalya|Izmir|Pune|Kochi|Curitiba|Rosario|Salta|Oaxaca|Puebla|Tucson|Boise|Asheville|
Duluth|Spokane|Quebec City|Victoria|Dunedin|Wellington|Adelaide|Darwin|Durban|Kampala|Arusha|
Tangier|Fez|Sfax|Haifa|Tartu|Vilnius|Kaunas|Lodz|Poznan|Leipzig|Dresden|Freiburg|Graz|
Innsbruck|Lausanne|Lugano|Nantes|Rennes|Bilbao|Cadiz|Faro|Braga|Coimbra|Split|Zadar|Varna|
Plovdiv|Cluj|Timisoara|Novi Sad|Skopje|Shkoder|Brighton|Norwich|Exeter|Swansea|Derry|Inverness|
the suburbs|the countryside|a village near Bath|a houseboat in Utrecht|the old town|downtown"""
)
COMPANIES = phrases(
    """Zalando|Siemens|Philips|Unilever|Ericsson|Spotify|Klarna|Adyen|Booking.com|Atlassian|
Canva|Shopify|Wise|Monzo|Revolut|Deliveroo|Ocado|Rolls-Royce|Airbus|Bosch|Volvo|Maersk|Novo
Nordisk|Lego|Ikea|Nestle|Roche|Novartis|Accenture|Capgemini|Deloitte|KPMG|the council|the NHS|
a small bakery|a law firm|a startup called Tiltwave|a design agency|the local hospital|the
university|a bike shop|a vineyard|a logistics company|a bank in the City|an insurance company|
the public library|a school in town|a game studio|a nonprofit|Datadog|Stripe|GitLab|Mozilla|
Red Hat|Canonical|Grafana Labs|Elastic|MongoDB|Cloudflare|Fastly|Twilio|Zendesk|HubSpot"""
)
ROLES = phrases(
    """nurse|paramedic|teacher|lecturer|accountant|architect|plumber|electrician|chef|barista|
pharmacist|dentist|vet|translator|journalist|photographer|graphic designer|product manager|
software engineer|data scientist|site reliability engineer|QA engineer|team lead|engineering
manager|staff engineer|principal engineer|junior developer|senior developer|intern|CTO|
head of marketing|sales rep|recruiter|paralegal|solicitor|carpenter|gardener|librarian|
social worker|physiotherapist|midwife|firefighter|police officer|pilot|flight attendant|
bus driver|postdoc|PhD student|research assistant|professor|tutor|consultant|freelancer"""
)
PARTNERS = NAMES
DIETS = phrases(
    """vegan|vegetarian|pescatarian|keto|paleo|gluten-free|dairy-free|low-carb|flexitarian|
halal|kosher|on the Mediterranean diet|eating meat again|eating everything|plant-based|raw vegan"""
)
ALLERGENS = phrases(
    """peanuts|tree nuts|shellfish|eggs|milk|soy|wheat|sesame|bees|wasps|latex|penicillin|
dust mites|pollen|cats|dogs|horses|mould|kiwi|strawberries"""
)
TEAMS = phrases(
    """platform team|payments team|mobile team|data team|growth team|infra team|security team|
search team|billing team|checkout team|design team|support team|ML team|frontend team|backend
team|SRE team|identity team|ads team|analytics team|onboarding team|sales team|finance team|
research team|QA team|devrel team|core team|API team|risk team|logistics team|content team"""
)
COUNT_NOUNS = phrases(
    """cats|dogs|kids|children|grandchildren|bikes|cars|plants|chickens|goldfish|guitars|
languages|rabbits|horses|tattoos|siblings|flatmates|houses|employees|engineers|servers|
replicas|regions|shards|nodes|microservices|customers|stores|offices|direct reports"""
)
NUMBERS = phrases(
    """one|two|three|four|five|six|seven|eight|nine|ten|twelve|2|3|4|5|6|7|8|9|11|14|15|20|
25|40|50|120"""
)
FAVOURITE_OF = phrases(
    """colour|food|band|film|book|season|drink|city|sport|song|game|flower|cheese|dessert|
holiday spot|podcast|painter|author|tea|beer|wine|coffee shop|restaurant|TV show|composer"""
)
FAVOURITES = phrases(
    """blue|green|orange|purple|red|yellow|teal|pizza|ramen|paella|dumplings|curry|pho|
lasagne|the Beatles|Fleetwood Mac|Bjork|Kraftwerk|Arcade Fire|Casablanca|Spirited Away|
Amelie|The Hobbit|Middlemarch|Beloved|winter|summer|spring|autumn|mint tea|espresso|cider|
lemonade|Kyoto|Lisbon|rugby|cricket|basketball|chess|Catan|tulips|sunflowers|brie|gouda|
tiramisu|cheesecake|Monet|Frida Kahlo|Murakami|Le Guin|Bach|Chopin|Earl Grey|stout|Rioja"""
)
PREFERENCES = [
    ("seat", phrases("window seat|aisle seat|seat near the front|exit row|middle seat")),
    ("coffee", phrases("with oat milk|black|with two sugars|as a flat white|decaf|with cream")),
    ("tea", phrases("with lemon|with milk and honey|green|strong with no sugar|iced")),
    ("phone", phrases("an iPhone|a Pixel|a Samsung|a Fairphone|an old Nokia|a OnePlus")),
    ("car", phrases("a Tesla|an old Volvo|a Fiat Panda|a Prius|a campervan|a Mini|a Skoda")),
    ("editor", phrases("Vim|Emacs|VS Code|IntelliJ|Sublime Text|Neovim|Helix|Zed|PyCharm")),
    ("commute", phrases("by train|by bike|on foot|by bus|by car|by ferry|on the metro|by scooter")),
    ("shell", phrases("zsh|bash|fish|PowerShell|nushell")),
    ("browser", phrases("Firefox|Chrome|Safari|Brave|Arc|Edge")),
    ("laptop", phrases("a MacBook|a ThinkPad|a Framework|a Dell XPS|a Surface")),
]
HOBBIES = phrases(
    """tennis|squash|badminton|chess|the violin|the cello|the piano|the drums|the guitar|
football|volleyball|golf|rock climbing|bouldering|running|cycling|swimming|rowing|yoga|pilates|
karate|judo|fencing|knitting|pottery|painting|birdwatching|baking|gardening|woodworking|
photography|surfing|skiing|hiking|dancing salsa|board games|crosswords|sudoku|poker"""
)
HABITS = phrases(
    """smoking|vaping|drinking coffee|drinking alcohol|eating meat|the gym membership|
the Netflix subscription|the allotment|the night shifts|the choir|the book club|the running
club|the five-a-side team|the evening classes|the Spanish course|therapy|the weekly poker game"""
)
SCHOOLS = phrases(
    """year 2|year 4|year 7|year 9|sixth form|primary school|secondary school|first grade|
third grade|fifth grade|high school|college|a master's in physics|a nursing degree|
an MBA|a coding bootcamp|a PhD in linguistics|an apprenticeship|night school|the Open University"""
)
COMPONENTS = phrases(
    """billing|checkout|the search service|the auth service|the frontend|the admin panel|
the data pipeline|the mobile app|the API gateway|the payment webhook|the recommender|
the reporting job|our CI|the build|the docs site|the status page|the notification service|
the inventory service|the ledger|the login flow|the session store|the events bus|prod|staging|
the main database|the analytics warehouse|the ML platform|the scheduler|the crawler|
the image resizer|the email worker|the public API|the partner API|the website|the blog|
the intranet|the HR system|the booking system|the warehouse app|the kiosk software"""
)
DEPENDENCIES = [
    ("PostgreSQL", phrases("11|12|13|14|15|16|17")),
    ("MySQL", phrases("5.7|8.0|8.4")),
    ("Redis", phrases("5|6|6.2|7|7.2")),
    ("Python", phrases("3.8|3.9|3.10|3.11|3.12|3.13")),
    ("Node", phrases("14|16|18|20|22")),
    ("Java", phrases("8|11|17|21")),
    ("Go", phrases("1.19|1.20|1.21|1.22")),
    ("Kubernetes", phrases("1.24|1.25|1.26|1.27|1.28|1.29")),
    ("Django", phrases("3.2|4.1|4.2|5.0")),
    ("React", phrases("16|17|18|19")),
    ("Rails", phrases("6.1|7.0|7.1")),
    ("Kafka", phrases("2.8|3.4|3.6")),
    ("Elasticsearch", phrases("7.10|7.17|8.11")),
    ("Ubuntu", phrases("18.04|20.04|22.04|24.04")),
    ("Debian", phrases("10|11|12")),
    ("Spring Boot", phrases("2.7|3.1|3.2")),
    ("Terraform", phrases("0.14|1.3|1.5|1.7")),
    ("Envoy", phrases("1.24|1.27|1.29")),
    ("Angular", phrases("12|15|17")),
    ("PHP", phrases("7.4|8.1|8.3")),
]
OWNERS = NAMES + phrases(
    """the platform team|the identity team|the data team|the SRE team|the payments team|
the vendor|the contractor|support|the infra folks|the on-call engineer|the core team"""
)
OWNED = phrases(
    """the on-call rotation|the release process|the billing dashboards|the alerting rules|
the incident reviews|the weekly report|the migration|the Kafka cluster|the design system|
the onboarding docs|the security review|the budget spreadsheet|the hiring pipeline|
the customer escalations|the deploy pipeline|the status page|the roadmap|the quarterly planning|
the runbook|the audit|the team newsletter|the interview loop|ticket OPS-311|ticket WEB-88|
the flaky-test triage|the vendor contract|the office move|the backups|the staging cluster"""
)
EVENTS = phrases(
    """standup|the nightly backup|the deploy|releases|the retro|sprint planning|the batch import|
the cron job|the all-hands|on-call handover|the data refresh|the report email|the cleanup job|
the cache warmup|the billing run|office hours|the team lunch|the demo|code freeze|the 1:1s"""
)
WHENS = phrases(
    """every Monday|every Tuesday|on Wednesdays|on Thursdays|every Friday|at 9:30|at 10:15|
at 2am UTC|at 4am|at midnight|at noon|twice a week|every two weeks|once a month|daily|hourly|
every six hours|on the first of the month|on Tuesday mornings|after lunch on Fridays|
every other Thursday|weekly|at 8pm|at 6am|two weeks long|one week|three weeks|
from 9 to 5|around the clock|24/7|Monday to Friday|on weekends only|in the mornings"""
)
LIMITS = [
    (
        "rate limit",
        phrases("100 requests per minute|300 requests per minute|50 per second|1000 per hour"),
    ),
    ("timeout", phrases("5 seconds|10 seconds|30 seconds|2 minutes|90 seconds")),
    ("upload limit", phrases("10 MB|25 MB|100 MB|2 GB|500 MB")),
    ("budget", phrases("10k a month|15k a month|20k a month|40k a quarter|2k a week")),
    ("log retention", phrases("7 days|14 days|30 days|90 days|365 days")),
    ("quota", phrases("4 GPUs|8 GPUs|16 GPUs|2 TB|500 GB")),
    ("price", phrases("9 euros a month|12 euros a month|15 dollars|29 dollars a seat|99 pounds")),
    ("max connections", phrases("100|200|500|1000")),
    ("batch size", phrases("32|64|256|1000 rows")),
    ("memory limit", phrases("512 MB|1 GB|2 GB|4 GB|8 GB")),
    ("headcount", phrases("6 people|10 people|14 people|25 people")),
    ("salary", phrases("40k|48k|55k|62k|80k")),
    ("dose", phrases("10 mg|20 mg|30 mg|50 mg|100 mg")),
    ("SLA", phrases("99.5%|99.9%|99.95%|four hours|one business day")),
]
HOSTS = phrases(
    """AWS|GCP|Azure|Hetzner|OVH|DigitalOcean|Fly.io|Heroku|Vercel|Netlify|our own racks|
a VM in the Frankfurt data centre|a Mac mini in the office|a Raspberry Pi|eu-west-1|us-east-1|
eu-central-1|ap-southeast-2|the Dublin region|on-prem|a colo in Amsterdam|Cloudflare Workers|
bare metal in Helsinki|the old VMware cluster|Kubernetes in Oregon|the London office|
12 Harbour Street|the third floor|a co-working space in Leith|Dublin|Amsterdam|Singapore"""
)
TOOLS = [
    ("CI", phrases("Jenkins|GitHub Actions|GitLab CI|CircleCI|Buildkite|Travis|Drone")),
    ("metrics", phrases("Prometheus|Graphite|Datadog|InfluxDB|New Relic|CloudWatch")),
    ("logging", phrases("Splunk|Loki|the ELK stack|Papertrail|Graylog")),
    ("login", phrases("Okta|Azure AD|Auth0|Keycloak|Google SSO|LDAP")),
    ("shipping", phrases("DHL|UPS|FedEx|DPD|Royal Mail|PostNL")),
    ("ticketing", phrases("Jira|Linear|GitHub Issues|Trello|Asana|YouTrack")),
    ("chat", phrases("Slack|Teams|Mattermost|Discord|Zulip")),
    ("payments", phrases("Stripe|Adyen|PayPal|Braintree|Mollie")),
    ("database", phrases("MySQL|Postgres|ClickHouse|BigQuery|Snowflake|MongoDB|DynamoDB")),
    ("framework", phrases("Angular|React|Vue|Svelte|Django|Flask|Rails|Laravel")),
    ("email", phrases("SendGrid|Mailgun|Postmark|SES")),
    ("backups", phrases("S3|Backblaze|Glacier|a NAS in the office|Tarsnap")),
    ("analytics", phrases("Google Analytics|Plausible|Matomo|Amplitude|Mixpanel")),
]
TIMES = phrases(
    """last week|last month|in March|in the spring|over the summer|this year|yesterday|
a few weeks ago|recently|in January|after the holidays|over the weekend|this morning|
on Friday|since the reorg|from today|as of Monday|two days ago|at the end of last year"""
)
FILLERS = phrases(
    """honestly|to be fair|by the way|funnily enough|long story short|as it turns out|
believe it or not|for what it's worth|anyway|so yeah|fun fact|quick update|heads up|
big news|good news|in other news|not gonna lie|small thing"""
)
TAILS = phrases(
    """it's been great|long story|finally|what a year|can't complain|fingers crossed|
more on that later|no regrets|we'll see how it goes|it was about time|still getting used to it|
it's a big change|it feels weird|so much better|everyone is happy about it|for now at least"""
)


#: what often follows a value in speech ("moved to Osaka for work")
AFTER = phrases(
    """for work|with the kids|near the park|in the end|after the holidays|for the weather|to be
near family|and we love it|which is great|so that's that|for now|with two friends|in an old
house|by the sea|since the spring|at least for a while|for the commute|because of the rent|
every day|no contest|all the blossom|it's so much calmer|mostly on weekends|for a while now|
on the third floor|in the new building|across the street|for personal reasons"""
)
#: how a turn often starts
BEFORE = phrases("No|Yes|Well|Honestly|So|Oh|Actually|Right|Okay|Ha|Yep|Nope|Update")
